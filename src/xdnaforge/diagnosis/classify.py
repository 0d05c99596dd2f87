"""Which knowledge entries a log line belongs to, and the diagnoses a stream of lines adds up
to. Pure.

Journals repeat the same messages with new timestamps, so a line is classified once per
message (the line without its dmesg/journal prefix) and the answer is cached: doctor reads
a 200 MB journal in one pass with flat memory (bench/bench_doctor.py).

Order of the diagnoses: root-most first. A failure that knowledge says follows from another
one present (`after:`) ranks behind it; a driver error that reports the same errno as a
driver error just before it is the caller passing the failure up (`Hardware init failed,
ret -22` after `Power off failed, ret -22`) and ranks behind it; otherwise the family's
place in the stack decides, then the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from xdnaforge.diagnosis.errnos import NOT_FAILURES, decode, reported
from xdnaforge.diagnosis.fw_messages import answer_family
from xdnaforge.diagnosis.ioctls import accel_open_family, ioctl_family
from xdnaforge.diagnosis.knowledge import (
    ANNOTATION,
    NPU_RE,
    Diagnosis,
    Entry,
    load_families,
    load_knowledge,
    looks_failed,
    make_diagnosis,
)
from xdnaforge.diagnosis.upstream import KERNEL_COMPONENT, Message, catalogue

# "[  5.57]", "[Tue Feb 10 10:42:10 2026]", "nov 04 13:18:03 host kernel: [  1.6]",
# "2024-02-15T17:51:15.668676-08:00 host kernel: " (journalctl -o short-iso, syslog RFC 3339),
# "Jul 13 22:00:51.952097 host kernel: " (journalctl -o short-precise)
_PREFIX_RE = re.compile(
    # journald's short and short-iso(-precise) times: microseconds at most, so GitHub
    # Actions' stamp (seven digits, .NET's round-trip time) is never a journal's
    r"(?:(?:[A-Za-z]{3} +\d+ [\d:]+(?:\.\d+)?"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:[+-]\d\d:?\d\d|Z)?)"
    r" \w[\w.-]* [^:\s]+: )?"  # host (a hostname: never "[XRT]" or "file.c:12:"), ident
    r"(?:(?:\[\s*\d+\.\d+\]|\[[A-Z][a-z]{2} [^\]]*\]) *)?"
)
_CACHE_LIMIT = 100_000
_CHAIN_LINES = 6  # a caller logs its callee's errno within a few lines
_LINKS = 16  # later driver lines read per entry for errno chains
_PASS_MARK_RE = re.compile(r"\[(?:TEST )?PASS(?:ED)?\]")
# a failure word the line denies ("No *ERROR* lines", "without error", "0 failed"), counts
# of none ("(WARNING:43, CRITICAL-WARNING:0, ERROR:0)", "errors=0,"), and a timeout that is
# a setting, not an event ("dispatching (timeout 10s)...", "timeout=30")
_DENIED_RE = re.compile(
    # "0 failed", and a runner's count of none ("0 tests failed out of 200", ctest)
    r"(?i)\b(?:no|without|zero|0)\s+(?:(?:tests?|checks?|cases?|items?)\s+)?"
    r"[*\"'`]*(?:errors?|fail(?:ed|ures?|s)?)\b[*\"'`]*"
    # a measured error, a figure ("average L1 error: 1.87", "max abs error = 2e-3",
    # "relative error 1.2e-3", "RMS error (vs CPU): 0.01"), or the header of its figures
    # below ("pairwise-similarity error over 78 pairs:")
    r"|\b(?:mean|average|avg|max(?:imum)?|min(?:imum)?|abs(?:olute)?|relative|rel|rms|l[12]"
    r"|squared|quantization|similarity|reconstruction|approximation|numerical|rounding"
    r"|cosine)\s+error(?: (?:vs\.?|over|across|against) [^:=\n]{1,40}?| ?\([^()\n]{1,40}\))?"
    r"(?:\s*[:=]\s*(?:-?[\d.]|$)|\s+-?\d+(?:\.\d+(?:e[-+]?\d+)?|e[-+]?\d+)%?(?=[\s,;]|$))"
    # ... a metric that counts or rates errors ("error scores: 5" beside a WER, "error
    # rate = 0.02")
    r"|\berror (?:scores?|rates?)\s*[:=]\s*-?[\d.]"
    # ... or the word alone before a figure with a fraction, or an array of them, as a
    # comparison prints its differences ("Error:    [0.010805  0.036375 ...]"); an error
    # code has no fraction ("Error: -22", "Error: 0x80004005"), a version more than one dot
    r"|\berror\s*[:=]\s*(?:\[\s*)?-?\d+\.\d+(?:e[-+]?\d+)?%?(?=[\s,\]]|$)"
    # an option whose value or name is the word ("-Wl,--orphan-handling=error", "-Werror");
    # a logger's "level=error" is no option
    r"|--[a-z][\w-]*=error\b|(?<![\w-])-W(?:no-)?error(?:=[\w-]+)?(?![\w-])"
    r"|\b(?:errors?|fail(?:ed|ures?|s)?)\s*[:=]\s*0(?=\s*[,;)\]}]|\s*$)"
    r"|\(timeout:? ?\d+\s*(?:ms|us|s|sec|seconds?)\)|\btimeout=\d+\b"
    # a test runner's tally of the failures it expected (lit's "Expectedly Failed: 1", older
    # lit's "Expected Failures  : 1", lit/display.py): a result it counts as passing
    r"|^\s*Expect(?:edly Failed|ed Failures)\s*: +\d+(?: \([\d.]+%\))?\s*$"
    # what is missing, and the program fetching it in the next sentence ("nomic-embed-text
    # is not installed. Fetching it from ...", "model not found locally; downloading it"):
    # a step of its own it announces, not a failure (falling back, "Using CPU", is not this)
    r"|\bnot (?:installed|found(?: locally)?|present|cached|downloaded)\b[^\n.;]{0,60}[.;,] +"
    r"(?:fetching|downloading|installing|building|generating|compiling) (?:it|them)\b"
)
_FAIL_WORD_RE = re.compile(r"(?i)\bfail")
# a program's mark of a level below error, after its own tag where it has one ("[XRT]
# WARNING: ", "[Info] (ModelManager) ", "INFO: [aiecompiler 77-749] ")
_WARNING_MARK_RE = re.compile(
    r"(?i)(?:\[[a-z][\w.-]*\] +)?"
    r"\[?(?:warn(?:ing)?|info|notice|debug|trace|verbose)\]?(?::| {2}|\] )"
    # the Chess compiler's (xchesscc, AMD's AIE toolchain) diagnostics: 'Warning in "<file>",
    # line <n>: ...' (or 'Warning in "": (imprecise line-number, ...)')
    r'|(?-i:Warning) in "'
    # CPython's warnings module (warnings.formatwarning: "%s:%s: %s: %s", the file, its
    # line, the category, the message): "...\\torch\\utils\\cpp_extension.py:380: UserWarning:",
    # and code that has no file ("<stdin>:52: DeprecationWarning:", "<string>:1: ")
    r"|(?:(?:[A-Za-z]:)?[^:\n]{1,400}?\.pyw?|<[\w .-]{1,80}>):\d+: (?-i:[A-Z]\w*Warning): "
    # llama.cpp's logger (common/log.cpp, common_log_entry::print: "M.s.ms.us", then the
    # level's letter: I, W, D; E is an error) as its NPU backends' forks print it
    r"|\d{1,6}\.\d{2}\.\d{3}\.\d{3} (?-i:[IWD]) "
)
# the source line CPython's warnings display prints under the warning, indented
# (warnings.formatwarning: "  %s\n" of linecache's line): the call that warned, as code
_WARN_CALL_RE = re.compile(r"^[ \t]*(?:warnings\.)?warn(?:_explicit)?\((?:f?['\"]|\w)")
_RELAYED_ERROR_RE = re.compile(
    r"(?i)(?:\([\w.-]+\) +|\[[\w.-]+\] +)*\[?(?:error|fatal|critical)\]?(?::| {2}|\] )"
)
# the kernel's own WARNING report is never a mere warning
_KERNEL_WARNING_RE = re.compile(r"WARNING: (?:CPU: \d+ PID: |\S+:\d+ at )")


def prefix_length(line: str) -> int:
    """Length of the dmesg/journal prefix of `line` (0 when it has none)."""
    match = _PREFIX_RE.match(line)
    return match.end() if match else 0


def message_of(line: str) -> str:
    """The line without its dmesg/journal prefix."""
    match = _PREFIX_RE.match(line)
    return line[match.end() :] if match and match.end() else line


def kernel_prefix(prefix: str) -> bool:
    """A prefix (prefix_length) of the kernel's log: dmesg's time in brackets, or the
    journal's kernel ident; a service's line in the journal ("host flm[123]: ") is not."""
    return prefix.rstrip().endswith("]") or " kernel: " in prefix


# what an error number the NPU stack returns says to its caller, for a line of an NPU
# tool's run that names no family in words (the driver's ioctl handlers: -EACCES/-EPERM a
# request the caller may not make, -ENODEV/-ENXIO no device behind the node, -ENOMEM/-EFAULT
# a buffer, -EOPNOTSUPP/-ENOTTY/-ENOSYS a request this driver does not implement,
# -ETIMEDOUT/-ETIME a command that did not complete); EINVAL, EIO and EBUSY say nothing
# of where
ERRNO_FAMILIES = {
    "EACCES": "device-access",
    "EPERM": "device-access",
    "ENODEV": "device-access",
    "ENXIO": "device-access",
    "ENOMEM": "memory",
    "EFAULT": "memory",
    "EOPNOTSUPP": "versions",
    "ENOTTY": "versions",
    "ENOSYS": "versions",
    "ETIMEDOUT": "command",
    "ETIME": "command",
}


def _callee_text(line: str, template: str) -> str:
    """The text a caller's template prints in its last run-time piece (the callee's message),
    or "" when the template does not end with one or the line does not show its start."""
    if not template.endswith("%s"):
        return ""
    head = template.rsplit("%s", 1)[0].split("%s")[-1]
    at = line.find(head) if head else -1
    return line[at + len(head) :].strip() if at >= 0 else ""


def _driver_line(line: str, located: Message | None) -> bool:
    """A line of the kernel driver: its prefix says so, or it prints one of the driver's
    templates (pasted without the kernel log's prefix: "aie2_hwctx_restart: Config cu
    failed, ret -22")."""
    return (
        "amdxdna" in line
        or "[drm]" in line
        or (located is not None and located.component == KERNEL_COMPONENT)
    )


@dataclass(frozen=True, slots=True)
class LineClass:
    specific: tuple[Entry, ...]
    generic: Entry | None
    located: Message | None  # the upstream template the line prints, when known
    failure: bool  # error-level: left unexplained, it makes the verdict "unknown failure"
    explained: bool = False
    # the firmware's own answer to the driver's message is in it (fw_messages): a caller's
    # template that says more than its callee ("command opcode 0x10f failed, status ...")
    answered: bool = False


class Classifier:
    def __init__(self, entries: tuple[Entry, ...]) -> None:
        self.specific = tuple(e for e in entries if not e.generic)
        self.generic = tuple(e for e in entries if e.generic)
        families = load_families()
        self.rank = {family.id: index for index, family in enumerate(families)}
        self.by_file = {name: f.id for f in families for name in f.files}
        # for lines that do not name the NPU stack: only families that are not NPU-only
        npu_only = {f.id for f in families if f.npu_only}
        self.generic_anywhere = tuple(e for e in self.generic if e.family not in npu_only)
        # every specific signature as (its plain text, its regex's search, its entry's
        # index): a comprehension per line looks for the texts, the regexes run where they
        # are; folded: the lowercase texts of case-insensitive signatures
        signatures = [(s, at) for at, entry in enumerate(self.specific) for s in entry.signatures]
        self._plain = tuple((s.literal, s.search_regex, i) for s, i in signatures if not s.folded)
        self._folded = tuple((s.literal, s.search_regex, i) for s, i in signatures if s.folded)
        self._cache: dict[str, LineClass] = {}
        self._kernel_cache: dict[str, LineClass] = {}

    def classify(self, line: str) -> LineClass:
        cut = prefix_length(line)
        return self.classify_message(line[cut:], kernel_prefix(line[:cut]) if cut else False)

    def classify_message(self, key: str, kernel: bool = False) -> LineClass:
        """Classify a line already stripped of its journal prefix (message_of); `kernel`: the
        prefix was the kernel log's (kernel_prefix), so only the driver's templates apply."""
        cache = self._kernel_cache if kernel else self._cache
        found = cache.get(key)
        if found is None:
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()  # bounded memory on journals of ever-new messages
            found = cache[key] = self._classify(key, kernel)
        return found

    def _classify(self, line: str, kernel: bool = False) -> LineClass:
        matched = [at for text, search, at in self._plain if text in line and search(line)]
        lowered = line.lower() if line.isascii() else None  # else: the regexes' own folding
        matched += [
            at
            for text, search, at in self._folded
            if (lowered is None or text in lowered) and search(line)
        ]
        specific = tuple(self.specific[at] for at in sorted(set(matched)))
        failure = looks_failed(line)
        # every line is looked up, whatever its words: an upstream error template without a
        # failure word ("No such graph handle", "Query interrupted by user") is an error all
        # the same; a reader's finding ("xdnaforge: ...") no upstream printed
        located = None if line.startswith("xdnaforge: ") else catalogue().locate(line, kernel)
        driver_problem = located is not None and located.component == KERNEL_COMPONENT
        if located is not None and located.level == "error" and located.family != "notes":
            failure = True  # an error message without a failure word ("Bad time quantum 5")
        elif (
            located is not None
            and located.level == "warning"
            and located.component != KERNEL_COMPONENT
            and not _KERNEL_WARNING_RE.match(line)
        ):
            failure = False  # its source prints it as a warning ("Version check timed out")
        if failure and _PASS_MARK_RE.search(line) and not _FAIL_WORD_RE.search(line):
            failure = False  # "[TEST PASS] AIE async error detected.": a test that passed
        if failure and located is None and _DENIED_RE.search(line):
            failure = looks_failed(_DENIED_RE.sub(" ", line))  # what it denies is no failure
        if failure and _WARN_CALL_RE.match(line):
            failure = False  # the source line CPython shows under a warning: code, no message
        mark = _WARNING_MARK_RE.match(line) if failure else None
        if mark is not None and _RELAYED_ERROR_RE.match(line, mark.end()):
            mark = None  # another program's error it relays: "[Info] (FLM) [ERROR]  Model ..."
        if mark is not None and not _KERNEL_WARNING_RE.match(line):
            # the program itself says it is a warning ("[Warning]  Version check timed out;
            # continuing") or news ("[Info] ... NVIDIA GPU: detection error: No NVIDIA
            # discrete GPU found"): not an error, unless an entry or an error template it prints
            # says otherwise; an error it caught and quotes inside ("[XRT] WARNING:
            # Reverting to host copy of buffers (KDMA not supported on windows)") does not
            found = located.pattern.search(line) if located is not None else None
            failure = (
                located is not None
                and located.level == "error"
                and found is not None
                and (located.leads or found.start() <= mark.end() + 2)
            )
        errno = decode(line) if failure or driver_problem else None
        if errno is not None and errno.name in NOT_FAILURES:
            # "Hardware init failed, ret -517": a probe to retry later, in no family
            return LineClass(specific, None, located, False, bool(specific))
        if specific or not self.generic or not (failure or driver_problem):
            # a driver problem at warning level ("Device isn't making progress") still names
            # its family; other lines must look like a failure to reach a generic entry
            return LineClass(specific, None, located, failure, bool(specific))
        # where the message is thrown decides first (the reviewed source table), then the
        # generic entries' words; another driver's "failed to load firmware" is not the NPU's
        catch = None
        if located is not None and located.caller:
            callee = _callee_text(line, located.template)
            if callee:
                # a caller printing a caught exception's text ("Failed to load model: %s"
                # around "Failed to create context virtual ..."): the callee's message names
                # the failure; a line of the catalogue's sources is the NPU stack's, so every
                # generic entry may read it
                inner = self._classify(callee)
                catch = inner.generic or next(
                    (e for e in self.generic if any(p.search(callee) for p in e.signatures)),
                    None,
                )
                if catch is not None:
                    return LineClass((), catch, inner.located or located, failure, True)
        answered = ""
        if located is not None:
            answered = answer_family(line) if located.component == KERNEL_COMPONENT else ""
            family = (
                ioctl_family(line)
                or answered
                or accel_open_family(line)
                or located.family
                or self.by_file.get(located.file.rsplit("/", 1)[-1])
            )
            catch = self._family_entry(family, line)
        if catch is None:
            candidates = self.generic if NPU_RE.search(line) else self.generic_anywhere
            catch = next((e for e in candidates if any(p.search(line) for p in e.signatures)), None)
        return LineClass(specific, catch, located, failure, catch is not None, bool(answered))

    def classify_in_npu_tool(self, line: str) -> LineClass | None:
        """An error line no entry explained, read as a line of the NPU stack: the log is an
        NPU tool's own output (FastFlowLM, xrt-smi), so every generic entry may read it, the
        NPU-only ones too ("Error: Failed to create context virtual (0xc01e0009)" in an `flm
        run`). None when none does."""
        catch = next((e for e in self.generic if any(p.search(line) for p in e.signatures)), None)
        if catch is None:
            # no words of a family: what the error number it carries means to its caller
            errno = reported(line)
            family = ERRNO_FAMILIES.get(errno.name) if errno is not None else None
            catch = next((e for e in self.generic if e.family == family), None)
        if catch is None:
            return None
        return LineClass((), catch, None, True, True)

    def classify_in_build(self, line: str) -> LineClass | None:
        """An error line no entry explained, in a build's log (`build_errors.building`):
        read as a line of the build family (`_family_entry`)."""
        catch = self._family_entry("build", line)
        return None if catch is None else LineClass((), catch, None, True, True)

    def _family_entry(self, family: str | None, line: str) -> Entry | None:
        """The family's generic entry whose words the line has, else its entry for any line
        of the family (one without signatures: build-step-failed), else its first."""
        in_family = [e for e in self.generic if e.family == family]
        return next(
            (e for e in in_family if any(p.search(line) for p in e.signatures)),
            next((e for e in in_family if not e.signatures), in_family[0] if in_family else None),
        )


@dataclass(frozen=True, slots=True)
class _Found:
    entry: Entry
    number: int  # 0-based line of the first evidence
    diagnosis: Diagnosis
    driver: bool  # a driver (kernel) line: one link of an errno chain
    caller: bool = False  # a generic entry read from a caller's template: ranks last
    # (line, errno name) of the driver lines this entry read, the first one and those after
    # it: a chain can pass through any of them, not only the first (bounded: _LINKS)
    links: list[tuple[int, str]] = field(default_factory=list)


class Tally:
    """Diagnoses of the lines fed so far: once per code, root-most first."""

    def __init__(self, classifier: Classifier) -> None:
        self.classifier = classifier
        self._found: dict[str, _Found] = {}
        self._looked: dict[str, int] = {}  # later driver lines of a code read for its links
        self._specific_codes = {e.code for e in classifier.specific}

    def add(self, number: int, line: str, line_class: LineClass) -> None:
        if not line_class.explained:
            return
        for entry in line_class.specific:
            self._record(entry, number, line, line_class)
        if line_class.generic is not None:
            self._record(line_class.generic, number, line, line_class)

    def records(self, line_class: LineClass) -> bool:
        """Whether add() would record this line as the first evidence of some code."""
        if not line_class.explained:
            return False
        found = self._found
        generic = line_class.generic
        return (generic is not None and generic.code not in found) or any(
            e.code not in found for e in line_class.specific
        )

    def _record(self, entry: Entry, number: int, line: str, line_class: LineClass) -> None:
        known = self._found.get(entry.code)
        if known is not None:
            looked = self._looked.get(entry.code, 0)
            # bounded: a journal repeats lines
            if looked < _LINKS and _driver_line(line, line_class.located):
                self._looked[entry.code] = looked + 1
                errno = decode(line)
                if errno is not None:
                    known.links.append((number, errno.name))
            return
        source = line_class.located.describe() if line_class.located else ""
        text = line.strip()
        shown = 0 if text.startswith("xdnaforge: ") else number + 1
        diagnosis = make_diagnosis(entry, text, source, shown, message_of(text))
        located = line_class.located
        caller = (
            entry.caller or (entry.generic and located is not None and located.caller)
        ) and not line_class.answered
        found = self._found[entry.code] = _Found(
            entry, number, diagnosis, _driver_line(line, located), caller
        )
        errno = decode(line) if found.driver else None
        if errno is not None:
            found.links.append((number, errno.name))

    def diagnoses(self) -> list[Diagnosis]:
        found = list(self._found.values())
        specific = {
            f.entry.family
            for f in found
            if f.entry.code in self._specific_codes and not f.entry.fallback
        }
        # a generic entry, or a specific one in general words (`fallback`), only speaks for
        # a family no other specific entry has named
        kept = [
            f
            for f in found
            if (f.entry.code in self._specific_codes and not f.entry.fallback)
            or f.entry.family not in specific
        ]
        # a caller's report ("start npu failed, ret -22") says nothing its callee's
        # diagnosis does not: it stands only when nothing else was found
        if any(not f.caller for f in kept):
            kept = [f for f in kept if not f.caller]
        return [f.diagnosis for f in self._ordered(kept)]

    def _ordered(self, kept: list[_Found]) -> list[_Found]:
        by_line = sorted(kept, key=lambda f: f.number)
        by_code = {f.entry.code: f for f in by_line}
        # errno chains: a driver line passing up the errno of the driver line just before it
        chained: dict[str, _Found] = {}
        for index, item in enumerate(by_line):
            chained[item.entry.code] = item
            if not (item.driver and item.diagnosis.errno and item.links):
                continue
            own = item.links[0][1]  # the errno of the item's first line
            # the nearest earlier entry one of whose lines, just before, carries it
            nearest = [
                (item.number - at, earlier)
                for earlier in by_line[:index]
                if earlier.driver
                for at, name in earlier.links
                if name == own and 0 < item.number - at <= _CHAIN_LINES
            ]
            if nearest:
                chained[item.entry.code] = chained[min(nearest, key=lambda n: n[0])[1].entry.code]
        # an ioctl that failed in userspace returns what the driver returned: with a driver
        # error of the same errno in the log (pasted apart, so at any distance), that error
        # is its cause
        for item in by_line:
            if item.driver or not (item.diagnosis.ioctl and item.diagnosis.errno):
                continue
            name = item.diagnosis.errno.split(" ", 1)[0]
            cause = next(
                (d for d in by_line if d.driver and any(n == name for _, n in d.links)), None
            )
            if cause is not None:
                chained[item.entry.code] = chained[cause.entry.code]

        # the C++ runtime's report of an uncaught exception ("terminate called after throwing
        # ... what():  ...: Operation not permitted") that ends in an earlier error's errno:
        # the program passing that error up (a HIP error around XRT's buffer refusal)
        def errno_of(found: _Found) -> str:
            errno = reported(found.diagnosis.evidence)
            return errno.name if errno is not None else ""

        for item in by_line:
            if "what():" not in item.diagnosis.evidence:
                continue
            name = errno_of(item)
            cause = next(
                (d for d in by_line if d.number < item.number and name and errno_of(d) == name),
                None,
            )
            if cause is not None:
                chained[item.entry.code] = chained[cause.entry.code]

        def root(item: _Found, seen: frozenset[str] = frozenset()) -> _Found:
            after = item.entry.after
            if "*" in after:  # a messenger (make, a runner): after whatever else failed
                after = tuple(
                    c
                    for c, other in by_code.items()
                    if c != item.entry.code
                    and "*" not in other.entry.after
                    and other.diagnosis.severity == "error"
                )
            causes = [by_code[c] for c in after if c in by_code and c not in seen]
            if causes:
                first = min(causes, key=lambda f: f.number)
                return root(first, seen | {item.entry.code})
            found = chained[item.entry.code]
            return found if found is item else root(found, seen | {item.entry.code})

        rank = self.classifier.rank
        last = len(rank)

        def key(item: _Found) -> tuple[bool, int, int, bool, int]:
            cause = root(item)  # a consequence right after its cause, whatever its line
            return (
                cause.caller,  # a caller's report after what it called
                rank.get(cause.entry.family, last),
                cause.number,
                cause is not item,
                item.number,
            )

        return sorted(kept, key=key)


def diagnose(text: str, entries: tuple[Entry, ...] | None = None) -> list[Diagnosis]:
    """Every known failure in `text` once per code, root-most first."""
    classifier = Classifier(load_knowledge() if entries is None else entries)
    tally = Tally(classifier)
    for number, line in enumerate(text.splitlines()):
        if not line.startswith(ANNOTATION):
            tally.add(number, line, classifier.classify(line))
    return tally.diagnoses()
