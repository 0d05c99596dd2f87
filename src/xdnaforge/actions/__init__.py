"""What dodo.py calls: resolve the target once, run a command's stages, turn expected
failures into doit's TaskFailed. The top layer; nothing imports it but dodo.py."""
