"""bubblewrap and dpkg for an observed install: the argv and the shell script that builds a
throw-away root of the host, installs .deb files into it with the real dpkg and lists what
was left; pure (install/observe.py runs it, debs/observed.py reads what it prints).

Two sandboxes, one inside the other. The outer one is bubblewrap in a user namespace (uid 0
inside, network, PID, IPC and UTS namespaces of its own, the host's root bound read-only, a
tmpfs at /mnt): there the script, which is ours, mounts for each top-level directory of the
host an overlay whose lower layer is the host's directory and whose upper layer is on the
tmpfs (`userxattr`: the overlay of user namespaces; one per directory, since lowerdir=/ is
refused), puts stand-ins for the module tools into the upper layers, shadows dpkg's
database, and lists the upper layers when dpkg is done. dpkg and the maintainer scripts run
in the inner one: a second bubblewrap, in a user namespace of its own, on the overlays'
merged tree (pivot_root: nothing outside it is left to reach, not even the read-only host
root). The outer sandbox alone would not hold a script: as real root, uid 0 in a user
namespace is the host's root for file modes, and its own mounts are its to change, so
`mount -o remount,bind,rw /` there makes the host writable. In the inner one:

- no capability of the initial namespace (no module loading, no raw devices), and of its
  own only SCRIPT_CAPABILITIES: no CAP_SYS_ADMIN, so no mount, umount or remount, no
  namespace, no cgroup file system; `--disable-userns`, so no nested namespace to get it in;
- the /proc entries guarded by nothing but file modes read-only (PROC_COVERED);
- no network, no host socket (connect() through an overlay to a lower layer's socket is
  refused), no host process (PID namespace), and every process killed with dpkg's end.

What the scripts see of the host: the top-level symlinks (merged /usr), every top-level
directory but proc, sys, dev, tmp, run, mnt, media and lost+found (fresh and empty, as on a
booted system), and of dpkg's database only the packages with trigger interests and what
they depend on (so the host's triggers run as in a real install: libc-bin's ldconfig,
man-db ...; a trigger is not processed for a package whose dependencies are missing), their
pending triggers cleared, never the packages being installed; `available` and the update
journal are emptied. So what else the host has installed (an older version of the package,
a conflicting one) does not change the result. A directory with a mount below it (/boot/efi,
a container's layers under /var/lib) cannot be an overlay in a user namespace (the kernel
keeps what is under a locked mount hidden): its entries are then laid one by one, an overlay
for each directory that can be one, the mounts where even that is refused and the files of
the directory itself bound read-only, a write to them failing there. Files of a uid the
namespace does not map (anything but root's, as root) cannot be changed: a script that tries
fails there; and unprivileged, nothing of root's can be, so the observation is "not run".

The protocol, on stdout: NUL-terminated pairs `TAG\\0VALUE\\0`. `not-run` CODE and `detail`
TEXT when the root could not be made; `status` dpkg's exit status or `timeout`; `tail` the
last lines of dpkg's output; `<` and `>` records (TAG `<TYPE MODE LINK`, VALUE the path) for
the root's own tree before and after dpkg (what is not an overlay: /tmp, new top-level
entries); `standin` PATH for each stand-in still intact; `+TYPE` PATH for each entry of an
upper layer (f file, d directory, l symlink, c device, o other); `-` PATH for a host entry
that is gone; `truncated` SIZE when the listing was cut at `max_bytes` (before the cut
listing, whose last record may be cut); `end` last. On stderr, when the script finishes: the
stand-ins' call log (one `NAME ARGS` line each), bounded; anything else there is bubblewrap's
own error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

# What loads, lists, builds or packs kernel modules; each gets a stand-in that records its call.
MODULE_TOOLS = (
    "modprobe",
    "insmod",
    "rmmod",
    "depmod",
    "modinfo",
    "kmod",
    "dkms",
    "update-initramfs",
    "mkinitramfs",
    "dracut",
    "mkinitcpio",
)
# where the stand-ins go, each where it is a real directory of the host (not a merged-/usr link)
TOOL_DIRS = ("usr/sbin", "usr/bin", "sbin", "bin", "usr/local/sbin", "usr/local/bin")
# inside the throw-away root: the .deb files, the call log; left out of the listing
PRIVATE = ".xdnaforge"
DEBS_INSIDE = f"/{PRIVATE}/debs"
# The scripts' capabilities (in their own user namespace): Docker's default set without the
# network's, what dpkg and maintainer scripts use. Not SYS_ADMIN: no mount, no namespace, so
# the covers below stay, and no cgroup file system to write the host's cgroups through.
SCRIPT_CAPABILITIES = (
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "SETGID",
    "SETUID",
    "SETFCAP",
    "SETPCAP",
    "SYS_CHROOT",
    "AUDIT_WRITE",
)
# /proc entries made read-only for the scripts (Docker's masked and read-only paths): uid 0
# there is the host's root (that is what lets an overlay copy root's files up), and these are
# guarded by nothing but file modes: /proc/sys/kernel/core_pattern names a program the kernel
# runs as root, /proc/sysrq-trigger reboots the machine. bubblewrap covers them only where
# the sandbox's uid could not write them anyway.
PROC_COVERED = (
    "sys",
    "sysrq-trigger",
    "irq",
    "bus",
    "fs",
    "acpi",
    "asound",
    "scsi",
    "driver",
    "mtrr",
    "pressure",
    "keys",
    "kcore",
    "kmsg",
    "timer_list",
    "sched_debug",
    "latency_stats",
)
TAIL_LINES = 40
CALLS_BYTES = 65536
MAX_BYTES = 8 * 1024 * 1024

_SCRIPT = r"""
set -u
B=$1 T=$2 MAX=$3; shift 3
R=/mnt/r U=/mnt/u W=/mnt/w X=/mnt/r/@PRIVATE@
TOOLS='@TOOLS@' TOOL_DIRS='@TOOL_DIRS@'
exec 4>&2 2>/mnt/err
say() { printf '%s\0%s\0' "$1" "$2"; }
stop() {
  say not-run "$1"
  say detail "$2$(tail -n 3 /mnt/err 2>/dev/null | tr -d '\000' | cut -c1-300)"
  say end ''
  exit 0
}
same() { chown --reference="$1" "$2" 2>/dev/null; chmod --reference="$1" "$2" 2>/dev/null || :; }
Q=/mnt/probe
mkdir -p "$R" "$U" "$W" "$X" /mnt/proc $Q/l $Q/u $Q/w $Q/m && : > /mnt/overlays ||
  stop setup 'cannot make the root: '
# the kernel's overlay in a user namespace at all (Linux 5.11), on a directory of our own
mount -t overlay overlay -o userxattr,lowerdir=$Q/l,upperdir=$Q/u,workdir=$Q/w $Q/m ||
  stop overlay ''
umount $Q/m
# A host directory in the root: an overlay of it, or, where the kernel refuses one (a mount
# below it is locked in this namespace), its entries one by one: directories again, a mount
# that is refused too and the files bound read-only, symlinks copied.
layer() {
  local p=$1 e
  mkdir -p "$R$p" || stop setup "cannot make $R$p: "
  same "$p" "$R$p"
  [ -r "$p" ] && [ -x "$p" ] || return 0
  case $p in *[,:\\]*|*[[:space:]]*) return 0;; esac
  mkdir -p "$U$p" "$W$p" || stop setup "cannot make the upper layer of $p: "
  same "$p" "$U$p"
  if mount -t overlay overlay -o "userxattr,lowerdir=$p,upperdir=$U$p,workdir=$W$p" "$R$p" \
    2>/dev/null; then
    printf '%s\n' "$p" >> /mnt/overlays
    return 0
  fi
  rmdir "$U$p" "$W$p"
  if [ "$2" = mount ]; then
    mount --rbind "$p" "$R$p" || stop setup "cannot bind $p: "
    return 0
  fi
  for e in "$p"/* "$p"/.[!.]* "$p"/..?*; do
    if [ -L "$e" ]; then
      ln -s "$(readlink "$e")" "$R$e" || stop setup "cannot copy the link $e: "
    elif [ -d "$e" ]; then
      if mountpoint -q "$e"; then layer "$e" mount; else layer "$e" ''; fi
    elif [ -f "$e" ]; then
      : > "$R$e" && mount --bind "$e" "$R$e" || stop setup "cannot bind $e: "
    fi
  done
}
for p in /* /.[!.]* /..?*; do
  n=${p#/}
  if [ -L "$p" ]; then
    ln -s "$(readlink "$p")" "$R/$n" || stop setup "cannot copy the link $p: "
  elif [ -d "$p" ] && [ "$n" != @PRIVATE@ ]; then
    case $n in
      proc|sys|dev|tmp|run|mnt|media|lost+found) mkdir -p "$R/$n" && same "$p" "$R/$n" ;;
      *) layer "$p" '' ;;
    esac
  fi
done
D=$R/var/lib/dpkg
[ -d "$D" ] && [ -f "$D/status" ] || stop layout ''
{ cut -d' ' -f2 "$D/triggers/File" 2>/dev/null
  for f in "$D"/triggers/*; do case ${f##*/} in File|Lock|Unincorp|\*) ;; *) cat "$f";; esac; done
} | sed 's,[/:].*,,' | sort -u > /mnt/interested
for d; do dpkg-deb -f "$R$d" Package; done > /mnt/own 2>>/mnt/err
cat > /mnt/closure.awk <<'END'
FILENAME == ARGV[1] { want[$1] = 1; next }
FILENAME == ARGV[2] { own[$1] = 1; next }
{
  name = ""; deps = ""; prov = ""; state = ""
  n = split($0, line, "\n")
  for (i = 1; i <= n; i++) {
    if (line[i] ~ /^Package: /) name = substr(line[i], 10)
    else if (line[i] ~ /^(Pre-)?Depends: /) {
      sub(/^[^:]*: /, "", line[i]); deps = deps "," line[i]
    }
    else if (line[i] ~ /^Provides: /) { sub(/^Provides: /, "", line[i]); prov = line[i] }
    else if (line[i] ~ /^Status: /) state = line[i]
  }
  if (name == "" || name in own || state !~ / (installed|triggers-pending|triggers-awaited)$/) next
  count++; text[count] = $0; named[count] = name; present[name] = 1; needs[name] = needs[name] deps
  m = split(prov, pv, ",")
  for (i = 1; i <= m; i++) { split(pv[i], w, " "); providers[w[1]] = providers[w[1]] " " name }
}
END {
  top = 0
  for (x in want) if (x in present) { keep[x] = 1; stack[++top] = x }
  while (top > 0) {
    x = stack[top--]
    m = split(needs[x], alt, /[,|]/)
    for (i = 1; i <= m; i++) {
      split(alt[i], w, " "); d = w[1]; sub(/:.*/, "", d)
      if (d == "") continue
      k = split(d " " providers[d], cand, " ")
      for (j = 1; j <= k; j++)
        if (cand[j] in present && !(cand[j] in keep)) { keep[cand[j]] = 1; stack[++top] = cand[j] }
    }
  }
  for (c = 1; c <= count; c++) {
    if (!(named[c] in keep)) continue
    n = split(text[c], line, "\n"); out = ""
    for (i = 1; i <= n; i++) {
      if (line[i] ~ /^Triggers-(Pending|Awaited):/) continue
      if (line[i] ~ /^Status: /) sub(/ triggers-(pending|awaited)$/, " installed", line[i])
      out = out line[i] "\n"
    }
    printf "%s\n", out
  }
}
END
awk -f /mnt/closure.awk /mnt/interested /mnt/own RS= "$D/status" > /mnt/status ||
  stop setup 'cannot read the dpkg database: '
{ cat /mnt/status > "$D/status" && : > "$D/available" && : > "$D/triggers/Unincorp" &&
  rm -f "$D"/updates/*; } 2>>/mnt/err || stop copy-up ''
cat > /mnt/standin <<'END'
#!/bin/sh
printf '%s\n' "${0##*/} $*" >> /@PRIVATE@/calls
exit 0
END
: > "$X/calls" && chmod 666 "$X/calls" || stop setup 'cannot make the call log: '
placed=
for d in $TOOL_DIRS; do
  [ -d "/$d" ] && [ ! -L "/$d" ] && [ "$(cd "/$d" && pwd -P)" = "/$d" ] || continue
  for t in $TOOLS; do
    { rm -f "$R/$d/$t" && cp /mnt/standin "$R/$d/$t" && chmod 755 "$R/$d/$t"; } || stop copy-up ''
  done
  placed="$placed $d"
done
snap() { find "$R" -xdev -mindepth 1 -path "$X" -prune -o -printf "$1%y %m %l\0%P\0"; }
snap '<' > /mnt/before || stop setup 'cannot list the root: '
# a /proc without covers, outside the root: the kernel lets the inner sandbox mount its own
# /proc only where one is fully visible already (bubblewrap's own /proc has covers)
mount -t proc proc /mnt/proc || stop proc ''
IB="$B --unshare-user --disable-userns --uid 0 --gid 0 --unshare-pid --die-with-parent
 --cap-drop ALL @CAPS@ --bind $R / --dev /dev --proc /proc @COVERS@ --chdir / --
 env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
 LANG=C.UTF-8 LC_ALL=C.UTF-8 HOME=/root DEBIAN_FRONTEND=noninteractive"
$IB true </dev/null >/mnt/inner 2>&1 4>&- || stop inner "$(head -c 300 /mnt/inner | tr -d '\000')"
timeout -k 5 "$T" $IB dpkg --force-depends --force-confnew -i "$@" \
  </dev/null >/mnt/dpkg.out 2>&1 4>&-
rc=$?
case $rc in 124|137) rc=timeout;; esac
# each entry of an upper layer, by its path in the root: what the merged tree has there
cat > /mnt/check-file <<'END'
R=$1 U=$2; shift 2
for q; do
  p=${q#"$U"} m=$R${q#"$U"}
  if [ -L "$m" ]; then k=l; elif [ -f "$m" ]; then k=f; elif [ -c "$m" ] || [ -b "$m" ]; then k=c
  elif [ -d "$m" ]; then continue; elif [ -e "$m" ]; then k=o; else continue; fi
  printf '+%s\0%s\0' "$k" "${p#/}"
done
END
# each directory of an upper layer: a host directory whose owner or mode changed, or a new
# one; and what of the host's directory the merged tree no longer has (whiteouts, and what
# an opaque directory hides)
cat > /mnt/check-dir <<'END'
R=$1 U=$2; shift 2
for q; do
  p=${q#"$U"} m=$R${q#"$U"}
  if [ -d "$p" ] && [ ! -L "$p" ] && [ "$(cd "$p" 2>/dev/null && pwd -P)" = "$p" ]; then
    [ "$(stat -c '%f %u %g' "$m" "$p" | uniq | wc -l)" = 1 ] || printf '+d\0%s\0' "${p#/}"
    for e in "$p"/* "$p"/.[!.]* "$p"/..?*; do
      [ -e "$e" ] || [ -L "$e" ] || continue
      [ -e "$R$e" ] || [ -L "$R$e" ] || printf -- '-\0%s\0' "${e#/}"
    done
  elif [ -d "$m" ] && [ ! -L "$m" ]; then
    printf '+d\0%s\0' "${p#/}"
  fi
done
END
{
  say status "$rc"
  say tail "$(tail -n @TAIL_LINES@ /mnt/dpkg.out | cut -c1-300 | tr -d '\000')"
  cat /mnt/before
  snap '>'
  for d in $placed; do
    for t in $TOOLS; do
      f=$R/$d/$t
      [ ! -f "$f" ] || [ -L "$f" ] || ! cmp -s /mnt/standin "$f" || say standin "$d/$t"
    done
  done
  while read -r o; do
    { find "$U$o" -mindepth 1 ! -type d -exec sh /mnt/check-file "$R" "$U" {} + &&
      find "$U$o" -type d -exec sh /mnt/check-dir "$R" "$U" {} +; } </dev/null ||
      echo "$o" >> /mnt/unlisted
  done < /mnt/overlays
} > /mnt/manifest && [ ! -s /mnt/unlisted ] ||
  stop listing "cannot list the changes in $(head -n 1 /mnt/unlisted): "
size=$(wc -c < /mnt/manifest)
if [ "$size" -gt "$MAX" ]; then
  say truncated "$size"
  head -c "$MAX" /mnt/manifest
  printf '\0'
else
  cat /mnt/manifest
fi
say end ''
[ ! -f "$X/calls" ] || [ -L "$X/calls" ] || head -c @CALLS_BYTES@ "$X/calls" | tr -d '\000' >&4
"""

SCRIPT = (
    _SCRIPT.replace("@PRIVATE@", PRIVATE)
    .replace("@TOOLS@", " ".join(MODULE_TOOLS))
    .replace("@TOOL_DIRS@", " ".join(TOOL_DIRS))
    .replace("@TAIL_LINES@", str(TAIL_LINES))
    .replace("@CALLS_BYTES@", str(CALLS_BYTES))
    .replace("@CAPS@", " ".join(f"--cap-add CAP_{cap}" for cap in SCRIPT_CAPABILITIES))
    .replace("@COVERS@", " ".join(f"--ro-bind-try /proc/{p} /proc/{p}" for p in PROC_COVERED))
)


def inside_paths(count: int) -> list[str]:
    """Where the inner sandbox sees the .deb files: by their position, so no name a caller
    passes ends up in an argv or a mount option."""
    return [f"{DEBS_INSIDE}/{index}.deb" for index in range(count)]


def observe_argv(
    bwrap: str, debs: Sequence[Path], *, dpkg_seconds: float, max_bytes: int = MAX_BYTES
) -> list[str]:
    """`bwrap ... sh -c SCRIPT` that installs `debs` (host paths) into a throw-away root.

    `bwrap` is the host's bubblewrap, absolute: the script starts it again for the inner
    sandbox. dpkg is stopped after `dpkg_seconds` (the listing follows); the listing on
    stdout is cut at `max_bytes`.
    """
    argv = [
        bwrap,
        "--unshare-user",
        "--uid",
        "0",
        "--gid",
        "0",
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--cap-add",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/mnt",
    ]
    inside = inside_paths(len(debs))
    for deb, path in zip(debs, inside, strict=True):
        argv += ["--ro-bind", str(deb), f"/mnt/r{path}"]
    argv += ["--", "sh", "-c", SCRIPT, "xdnaforge-observe", bwrap, f"{dpkg_seconds:.1f}"]
    argv += [str(max_bytes), *inside]
    return argv
