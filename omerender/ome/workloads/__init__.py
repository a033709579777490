"""The Kubernetes objects of a component: pods (:mod:`.pods`), Deployments, Services, HPAs and PDBs
(:mod:`.objects`), LeaderWorkerSets (:mod:`.multinode`), scaling (:mod:`.autoscaling`), labels and annotations
(:mod:`.metadata`), model storage (:mod:`.storage`) and runner placeholders (:mod:`.placeholders`)."""
