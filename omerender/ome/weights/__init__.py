"""Where a model's weights come from when the cluster runs no OME (``--model-weights download``): a
PersistentVolumeClaim per model and namespace, a Job that downloads the model into it, and what the serving pods
mount and wait for. In ``agent`` mode (the default) OME's model agent does this work and nothing here is used
but the settings (docs/how-to/model-weights.md)."""
