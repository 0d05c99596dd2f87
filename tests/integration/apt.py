"""Helpers for the publishing tests: a throwaway gpg key, `aptly serve` on 127.0.0.1, and an
apt client with a private configuration (its own state, cache, sources, pins and keyring)."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.debs import Spec, build_deb
from xdnaforge.state.records import write_record


def make_key(home: Path) -> str:
    """A passphrase-less ed25519 signing key in its own GNUPGHOME; returns its fingerprint."""
    home.mkdir(mode=0o700, parents=True)
    env = {"GNUPGHOME": str(home), "PATH": "/usr/bin:/bin"}
    subprocess.run(
        [
            "gpg",
            "--batch",
            "--passphrase",
            "",
            "--quick-gen-key",
            "xdnaforge test <test@example.invalid>",
            "ed25519",
            "sign",
            "never",
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    listing = subprocess.run(
        ["gpg", "--batch", "--with-colons", "--list-secret-keys"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))


def stop_agent(home: Path) -> None:
    """gpg starts a gpg-agent per GNUPGHOME that outlives the command: stop it."""
    subprocess.run(
        ["gpgconf", "--homedir", str(home), "--kill", "all"],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        check=False,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def aptly_serve(config: Path, port: int) -> Iterator[str]:
    """`aptly serve` on 127.0.0.1:<port> for the duration of the block; stopped after."""
    process = subprocess.Popen(
        ["aptly", f"-config={config}", "serve", f"-listen=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(url + "/", timeout=1).close()
                break
            except urllib.error.HTTPError:
                break  # it answers (404 for the root is fine)
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("aptly serve did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class AptClient:
    """apt-get as a host would run it, with every directory private to the test."""

    root: Path

    def __post_init__(self) -> None:
        for sub in (
            "etc/sources.list.d",
            "etc/preferences.d",
            "etc/apt.conf.d",
            "etc/trusted.gpg.d",
            "state/lists/partial",
            "cache/archives/partial",
            "log",
        ):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        (self.root / "etc/sources.list").write_text("")
        (self.root / "status").write_text("")
        (self.root / "apt.conf").write_text(
            f'Dir::Etc "{self.root}/etc/";\n'
            f'Dir::Etc::Parts "{self.root}/etc/apt.conf.d/";\n'
            f'Dir::State "{self.root}/state/";\n'
            f'Dir::State::status "{self.root}/status";\n'
            f'Dir::Cache "{self.root}/cache/";\n'
            f'Dir::Log "{self.root}/log/";\n'
            # as root apt would drop to the _apt user, who cannot write into the test's dirs
            'APT::Sandbox::User "root";\n'
            'Debug::NoLocking "true";\n'
            'Acquire::Languages "none";\n'
        )

    def follow(self, public: Path, target: str, url: str) -> None:
        """Install the host files that `doit publish` serves, as a host's admin would."""
        keyring = self.root / "keyring.gpg"
        shutil.copyfile(public / "xdnaforge-archive-keyring.gpg", keyring)
        entry = (public / target / f"xdnaforge-{target}.list").read_text()
        entry = entry.replace("/etc/apt/keyrings/xdnaforge-archive-keyring.gpg", str(keyring))
        assert url in entry
        (self.root / f"etc/sources.list.d/xdnaforge-{target}.list").write_text(entry)
        shutil.copyfile(
            public / target / f"xdnaforge-{target}.pref",
            self.root / f"etc/preferences.d/xdnaforge-{target}.pref",
        )

    def installed(self, debs: list[Path]) -> None:
        """The private dpkg status says these .deb files are installed (their own control
        fields, as dpkg would record them: apt tells versions apart by them too)."""
        paragraphs = []
        for deb in debs:
            control = subprocess.run(
                ["dpkg-deb", "-f", str(deb)], check=True, capture_output=True, text=True
            ).stdout
            paragraphs.append("Status: install ok installed\n" + control.strip() + "\n")
        (self.root / "status").write_text("\n".join(paragraphs))

    def forget_lists(self) -> None:
        """Drop the downloaded indexes, so the next update fetches every file again."""
        for index in (self.root / "state/lists").glob("*"):
            if index.is_file():
                index.unlink()

    def apt_get(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["apt-get", "-q", "-y", *args],
            env={
                "APT_CONFIG": str(self.root / "apt.conf"),
                "PATH": "/usr/bin:/bin",
                "LC_ALL": "C.UTF-8",
            },
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def download(self, *packages: str) -> dict[str, str]:
        """`apt-get install --download-only`: package file name -> sha256 of what came."""
        archives = self.root / "cache/archives"
        for old in archives.glob("*.deb"):
            old.unlink()
        done = self.apt_get("--download-only", "--allow-downgrades", "install", *packages)
        assert done.returncode == 0, done.stdout + done.stderr
        return {
            deb.name: hashlib.sha256(deb.read_bytes()).hexdigest()
            for deb in sorted(archives.glob("*.deb"))
        }


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_built(records: Path, target: str, specs: list[Spec]) -> dict[str, str]:
    """Records as `doit build` leaves them: .deb files, packages.json, a passing audit.json.

    Returns package -> sha256.
    """
    debs = records / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    built, audited, digests = [], [], {}
    for spec in specs:
        path = build_deb(debs, spec)
        digest = sha256(path)
        digests[spec.package] = digest
        built.append(
            {
                "file": f"debs/{path.name}",
                "package": spec.package,
                "version": spec.version,
                "architecture": spec.architecture,
                "size": path.stat().st_size,
                "sha256": digest,
            }
        )
        audited.append(
            {
                "package": spec.package,
                "file": f"debs/{path.name}",
                "sha256": digest,
                "verdict": "pass",
                "findings": [],
            }
        )
    write_record(records / "packages.json", "packages", {"target": target, "packages": built})
    write_record(
        records / "audit.json", "audit", {"target": target, "verdict": "pass", "packages": audited}
    )
    return digests


def export_keyring(home: Path, out: Path) -> Path:
    """The public half of the test key as a binary keyring (what signed-by wants)."""
    subprocess.run(
        ["gpg", "--batch", "--yes", "--output", str(out), "--export"],
        env={"GNUPGHOME": str(home), "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
    )
    return out


def sign_release(home: Path, release: Path) -> Path:
    """InRelease beside `release`, clear-signed with the test key (as an archive signs it)."""
    signed = release.with_name("InRelease")
    subprocess.run(
        ["gpg", "--batch", "--yes", "--clearsign", "--output", str(signed), str(release)],
        env={"GNUPGHOME": str(home), "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
    )
    return signed
