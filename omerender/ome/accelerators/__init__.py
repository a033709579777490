"""Accelerator classes: which class a component gets (:mod:`.choice`), what a class does to runners and pods
(:mod:`.effects`), and GPU counts (:mod:`.gpus`)."""
