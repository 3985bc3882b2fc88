"""Renders one chat template in a child process, bounded: `python -I chat_sandbox.py` reads a JSON job on stdin
and writes {"text": ...} or {"error": ...} on stdout. It imports only the standard library and jinja2, so the
child starts in a fraction of a second and `-I` keeps the parent's path out of it.

A template is untrusted input from the Hub. Jinja's sandbox refuses attribute tricks, but not size or time:
`{{ "x" * 10**10 }}` once took 21 GB, nested `range(100000)` loops ran for minutes. So the child renders with
(1) checks inside the sandbox: `*`, `+` and `**` refuse results past `MAX_ITEMS` characters or items (or
`MAX_INT_BITS` bits), `range` is Jinja's (at most 100,000 items) with its OverflowError said in one line, and
the rendered text is at most `MAX_ITEMS` characters; (2) limits on the process itself, whatever a template
finds beyond those checks (a string method, a filter): `MEMORY_BYTES` of address space and `CPU_SECONDS` of
CPU where the platform has `resource`, and the parent's wall-clock timeout (`chat.py`).

The environment is transformers' (`utils/chat_template_utils.py`, 5.24): ImmutableSandboxedEnvironment with
trim_blocks and lstrip_blocks, loopcontrols and the `{% generation %}` tag (AssistantTracker: it marks what the
assistant wrote, the text is the body's), `raise_exception`, a `tojson` that does not escape HTML,
`strftime_now`, a `dict` and a `namespace` that refuse underscore names.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any

MAX_ITEMS = 4_000_000  # characters of text or items of a list: a whole conversation fits many times over
MAX_INT_BITS = 100_000
MEMORY_BYTES = 512 << 20
CPU_SECONDS = 3


class BoundExceeded(Exception):
    """A template asked for more than the bounds allow; its message is one line for people."""


def environment():
    """The sandboxed environment with transformers' extensions and helpers, and the size checks."""
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    import jinja2.utils
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Bounded(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset(["*", "+", "**"])

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            _check_binop(operator, left, right)
            return super().call_binop(context, operator, left, right)

    class GenerationTag(jinja2.ext.Extension):
        """`{% generation %}...{% endgeneration %}`: renders its body (transformers records where it lies)."""

        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller: Any) -> str:
            return caller()

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None,
               sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format: str) -> str:
        return datetime.now().strftime(format)

    class TemplateDict:
        def __call__(self, *args: Any, **kwargs: Any) -> dict:
            return dict(*args, **kwargs)

        def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
            return dict.fromkeys(*args, **kwargs)

    class TemplateNamespace(jinja2.utils.Namespace):
        def __init__(*args: Any, **kwargs: Any) -> None:  # Jinja's signature trick: `namespace(self=...)` works
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name: str, value: Any) -> None:
            TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check_name(name: Any) -> None:
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(f"a namespace cannot hold underscore names, got {name!r}")

    env = Bounded(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals.update(raise_exception=raise_exception, strftime_now=strftime_now, dict=TemplateDict(),
                       namespace=TemplateNamespace)
    return env


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse a `*`, `+` or `**` whose result would pass the caps, before it is computed."""
    sized = (str, list, tuple)
    if operator == "*":
        count, seq = (right, left) if isinstance(left, sized) else (left, right)
        if isinstance(seq, sized) and isinstance(count, int) and len(seq) * count > MAX_ITEMS:
            raise BoundExceeded(f"a repetition would make {len(seq) * count:,} items; the cap is {MAX_ITEMS:,}")
        if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise BoundExceeded(f"a product would pass {MAX_INT_BITS:,} bits")
    elif operator == "+" and isinstance(left, sized) and isinstance(right, sized):
        if len(left) + len(right) > MAX_ITEMS:
            raise BoundExceeded(f"a sum would make {len(left) + len(right):,} items; the cap is {MAX_ITEMS:,}")
    elif operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and right > 0:
        if right * left.bit_length() > MAX_INT_BITS:
            raise BoundExceeded(f"a power would pass {MAX_INT_BITS:,} bits")


def _limit_process() -> None:
    """Address space and CPU time capped; at the CPU cap the running template stops with a one-line reason."""
    try:
        import resource
        import signal
    except ImportError:  # Windows: the parent's wall-clock timeout is the bound
        return

    def out_of_time(signum: int, frame: Any) -> None:
        raise BoundExceeded(f"it ran past {CPU_SECONDS} s of CPU")

    signal.signal(signal.SIGXCPU, out_of_time)
    # The hard CPU cap, a second later, kills a child stuck inside one C call (SIGKILL).
    for limit, soft, hard in ((resource.RLIMIT_AS, MEMORY_BYTES, MEMORY_BYTES),
                              (resource.RLIMIT_CPU, CPU_SECONDS, CPU_SECONDS + 1)):
        old_hard = resource.getrlimit(limit)[1]
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        resource.setrlimit(limit, (soft, hard))


def render(job: dict[str, Any]) -> str:
    """The template rendered with the job's messages and variables; BoundExceeded past the caps."""
    template = environment().from_string(job["source"])
    pieces, size = [], 0
    for piece in template.generate(**job["variables"]):
        size += len(piece)
        if size > MAX_ITEMS:
            raise BoundExceeded(f"the rendered text passed {MAX_ITEMS:,} characters")
        pieces.append(piece)
    return "".join(pieces)


def _reason(err: BaseException) -> str:
    """One line: the template's own message, or the kind of failure and its first words."""
    import jinja2

    if isinstance(err, MemoryError):
        return f"it asked for more than {MEMORY_BYTES >> 20} MiB of memory"
    text = " ".join(str(err).split()) or type(err).__name__
    if isinstance(err, (BoundExceeded, jinja2.TemplateError)):
        return text
    return f"{type(err).__name__}: {text}"  # OverflowError: Range too big..., TypeError, ...


def main() -> int:
    _limit_process()
    job = json.loads(sys.stdin.read())
    try:
        out = {"text": render(job)}
    except BaseException as err:  # noqa: BLE001 - every failure of an untrusted template is one line for the parent
        out = {"error": _reason(err)}
    sys.stdout.write(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
