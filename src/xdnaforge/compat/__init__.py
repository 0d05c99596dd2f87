"""The compatibility resolver: which kernel driver, firmware blob and userspace fit a host.

Owns the facts generated from upstream sources (data/compat_facts.json, written by
scripts/gen_compat_facts.py), the host facts it judges (read from a sysroot by observe.py or
from a facts file by facts.py) and the verdict (resolver.py): which firmware file the driver
loads, whether it accepts its protocol, which recipes fit, which consumers are ready, and the
one fix. resolver.py and contracts.py are pure; nothing here starts a process or writes a file.
"""
