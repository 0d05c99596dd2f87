"""What would run and why, as pure data: the ordered stages of a target with their
fingerprints, the text of `doit plan`, the toolchain that keys a build, the options a build
script accepts, the verdict of a matrix cell against its expectation, and the
candidate recipe `doit track` writes for an upstream line."""
