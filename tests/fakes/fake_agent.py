"""A scriptable stand-in for the agent CLIs `opencode`, `kilo` and `claude` (tests only).

Called by the wrappers in tests/fakes/bin as `fake_agent.py <name> <argv...>`.

Environment:
  FAKE_AGENT_SCRIPT  JSON file: {"invocations": [inv0, inv1, ...]}; invocation k of the test
                     runs entry k, the last entry repeats. An entry is a list of steps, or
                     {"stdin": "all" | "line" | "none", "steps": [...]}.
  FAKE_AGENT_RECORD  directory receiving inv-NNN.json per invocation (argv, cwd, env, stdin
                     digest, tty facts) and inv-NNN.stdin.jsonl (texts read by echo steps).
  FAKE_AGENT_VERSION what `--version` prints (default: a tested version of that CLI).
  FAKE_AGENT_SESSIONS what `session list ...` prints (default `[]`); not an invocation.
  FAKE_AGENT_EXPORT  what `export <id>` prints (default: nothing, exit 1); not an invocation.

stdin by default: opencode/kilo read it all to EOF (like the real CLIs); claude reads the
first stream-json line and records the decoded text of that user message.

Steps: one dict each; its main key names the action, other keys are options.
  {"print": "text"}           write text as is (no newline added)
  {"line": "text"}            write text + newline
  {"bytes": "ff fe 0a"}       write raw bytes given in hex (invalid UTF-8, CRs, ...)
  {"json": {...}}             write one JSON line
  {"session": "ses_X"}        the conversation id used by the events below
  {"init": true}              claude system/init; opencode/kilo step_start (with sessionID)
  {"say": "text"}             an assistant text event in the CLI's own format
  {"tool": {"name", "input", "output", "status", "is_error"}}   a tool call (+ result)
                              "pending": true prints only claude's tool_use (no result yet)
  {"finish": {...}}           opencode/kilo step_finish (reason, cost, tokens); claude result
  {"result": {...}}           claude result event; the dict overrides its fields
  {"error": {"name", "message", "status", "headers"}}           opencode/kilo error event
  {"flood": N, "width": 100}  N bytes of 'x' lines, as fast as possible
  {"flood": N, "line": "text"} N bytes of that line over and over (prose, not only 'x')
  {"drip": "x", "every": 0.8, "count": 5}                       one write every X seconds
  {"sleep": S}                go silent for S seconds
  {"wait_file": "path", "timeout": 60}  go silent until that file exists (relative to the cwd)
  {"echo_stdin": N, "as": "raw"}  read N more stdin lines; say each text (claude: decoded)
  {"read_stdin": true}        read stdin to EOF; noted with its length and SHA-256
  {"spawn": ["sleep", "1000"], "detach": true, "ignore": ["TERM", "HUP"], "pid_file": "f"}
                              start a (grand)child; detach = double fork + setsid;
                              "wait": true waits for it (not with detach)
  {"ignore": ["TERM", "INT"]} this process ignores those signals from now on
  {"write_file": "path", "text": "..."}                         relative to the cwd
  {"snapshot": "path", "as": "name"}  copy a file (relative to the cwd) to <records>/name,
                              or note its absence there as "<missing>"
  {"close_output": true}      let go of the terminal (EOF) and keep running
  {"startup_db": "/abs/path", "hold": S}  hold a shared start lock S s silently; one held
                              by another agent: "database is locked", exit 1 (opencode, kilo)
  {"mark": "name"}            write {"monotonic", "time"} to <records>/name (for benchmarks)
  {"exit": N}, {"die": "SEGV"}
After the last step the fake exits 0.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import struct
import sys
import termios
import time
from pathlib import Path
from typing import Any

VERSIONS = {"opencode": "1.18.33", "kilo": "7.7.7", "claude": "2.1.197 (Claude Code)"}
RECORDED_ENV = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "PAGER", "GIT_PAGER", "TERM")


class Agent:
    def __init__(self, name: str, index: int, record_dir: Path | None) -> None:
        self.name = name
        self.index = index
        self.record_dir = record_dir
        self.session = f"ses_fake{index}"
        self.message = 0

    # -- output helpers --------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view) :]

    def event(self, obj: dict[str, Any]) -> None:
        self.write(json.dumps(obj).encode() + b"\n")

    @property
    def claude(self) -> bool:
        return self.name == "claude"

    def next_id(self, prefix: str) -> str:
        self.message += 1
        return f"{prefix}_{self.index}_{self.message:04d}"

    def oc(self, kind: str, part: dict[str, Any]) -> None:
        """An opencode/kilo `run --format json` event."""
        part = {"sessionID": self.session, "messageID": "msg_fake", **part}
        self.event({"type": kind, "timestamp": int(time.time() * 1000),
                    "sessionID": self.session, "part": part})

    def assistant(self, content: list[dict[str, Any]], usage: dict[str, int] | None) -> None:
        message = {"id": self.next_id("msg"), "type": "message", "role": "assistant",
                   "model": "fake-model", "content": content,
                   "usage": usage or {"input_tokens": 10, "output_tokens": 5}}
        self.event({"type": "assistant", "message": message, "session_id": self.session})

    # -- recording -------------------------------------------------------------------------
    def record(self, extra: dict[str, Any]) -> None:
        if self.record_dir is None:
            return
        env = {k: v for k, v in os.environ.items() if k.startswith(("AIDD_", "TEMPORAL_"))}
        env.update({k: os.environ[k] for k in RECORDED_ENV if k in os.environ})
        data = {"index": self.index, "name": self.name, "argv": sys.argv[2:],
                "cwd": os.getcwd(), "env": env, "pid": os.getpid(), "pgid": os.getpgid(0),
                "sid": os.getsid(0), "started": time.monotonic(), **tty_facts(), **extra}
        target = self.record_dir / f"inv-{self.index:03d}.json"
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(target)

    def note_stdin(self, text: str) -> None:
        if self.record_dir is not None:
            with (self.record_dir / f"inv-{self.index:03d}.stdin.jsonl").open("a") as fh:
                fh.write(json.dumps({"text": text, "at": time.monotonic()}) + "\n")


def tty_facts() -> dict[str, Any]:
    facts: dict[str, Any] = {"stdout_tty": os.isatty(1), "stdin_tty": os.isatty(0)}
    if os.isatty(1):
        rows, cols = struct.unpack("HHHH", fcntl.ioctl(1, termios.TIOCGWINSZ, b"\0" * 8))[:2]
        opost = bool(termios.tcgetattr(1)[1] & termios.OPOST)
        facts.update(tty_size=[rows, cols], opost=opost)
        try:
            fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
            os.close(fd)
            facts["controlling_tty"] = True
        except OSError:
            facts["controlling_tty"] = False
    return facts


def digest(data: bytes) -> dict[str, Any]:
    return {"stdin_sha256": hashlib.sha256(data).hexdigest(), "stdin_len": len(data)}


def user_text(line: bytes) -> str:
    """The text of a stream-json user message line (claude's input format)."""
    try:
        message = json.loads(line)
        return "".join(part.get("text", "") for part in message["message"]["content"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return line.decode("utf-8", "surrogateescape")


def read_first_input(agent: Agent, mode: str) -> dict[str, Any]:
    if mode == "all":
        return digest(sys.stdin.buffer.read())
    if mode == "line":
        line = sys.stdin.buffer.readline()
        text = user_text(line).encode("utf-8", "surrogateescape")
        return {**digest(text), "stdin_raw_len": len(line)}
    return {}


# -- steps -----------------------------------------------------------------------------------
def step_init(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    if agent.claude:
        agent.event({"type": "system", "subtype": "init", "session_id": agent.session,
                     "model": step.get("model", "fake-model"), "tools": []})
    else:
        agent.oc("step_start", {"type": "step-start"})


def step_say(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    if agent.claude:
        agent.assistant([{"type": "text", "text": str(arg)}], step.get("usage"))
    else:
        agent.oc("text", {"type": "text", "text": str(arg)})


def step_tool(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    name = arg.get("name", "Write")
    tool_input = arg.get("input", {})
    output = arg.get("output", "ok")
    if agent.claude:
        tool_id = agent.next_id("toolu")
        agent.assistant([{"type": "tool_use", "id": tool_id, "name": name,
                          "input": tool_input}], None)
        if arg.get("pending"):
            return
        agent.event({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": output,
             "is_error": bool(arg.get("is_error"))}]}})
    else:
        agent.oc("tool_use", {"type": "tool", "tool": name, "state": {
            "status": arg.get("status", "completed"), "input": tool_input, "output": output}})


def step_finish(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    if agent.claude:
        step_result(agent, {}, step)
        return
    options = arg if isinstance(arg, dict) else {}
    agent.oc("step_finish", {"type": "step-finish", "reason": options.get("reason", "stop"),
                             "cost": options.get("cost", 0.001),
                             "tokens": options.get("tokens", {
                                 "input": 100, "output": 20, "reasoning": 0,
                                 "cache": {"read": 5, "write": 0}})})


def step_result(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    event = {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1234,
             "num_turns": 1, "result": "All done.", "session_id": agent.session,
             "total_cost_usd": 0.0123,
             "usage": {"input_tokens": 100, "output_tokens": 50,
                       "cache_read_input_tokens": 7, "cache_creation_input_tokens": 3}}
    event.update(arg if isinstance(arg, dict) else {})
    agent.event(event)


def step_error(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    """opencode/kilo `error` event: name, message, status, headers."""
    data: dict[str, Any] = {"message": arg.get("message", "boom")}
    if "status" in arg:
        data["statusCode"] = arg["status"]
    if "headers" in arg:
        data["responseHeaders"] = arg["headers"]
    agent.event({"type": "error", "timestamp": int(time.time() * 1000),
                 "sessionID": agent.session,
                 "error": {"name": arg.get("name", "APIError"), "data": data}})


def step_flood(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    total = int(arg)
    width = int(step.get("width", 100))
    line = str(step["line"]).encode() + b"\n" if "line" in step else (b"x" * (width - 1)) + b"\n"
    width = len(line)
    block = line * max(1, 65536 // width)
    while total > 0:
        piece = block[:total]
        agent.write(piece)
        total -= len(piece)


def step_drip(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    for _ in range(int(step.get("count", 5))):
        agent.write(str(arg).encode())
        time.sleep(float(step.get("every", 0.5)))


def step_echo_stdin(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    """Read `arg` more lines of stdin; say each decoded text (or print it raw)."""
    for _ in range(int(arg)):
        line = sys.stdin.buffer.readline()
        while agent.claude and b'"control_request"' in line:  # answered, like the real CLI
            agent.write(b'{"type":"control_response","response":{"subtype":"success"}}\n')
            line = sys.stdin.buffer.readline()
        if not line:
            agent.note_stdin("<EOF>")
            return
        text = user_text(line) if agent.claude else line.decode("utf-8", "replace")
        agent.note_stdin(text)
        if step.get("as") == "raw":
            agent.write(text.encode() + b"\n")
        else:
            step_say(agent, f"echo: {text}", {})


def step_read_stdin(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    """Read stdin to EOF; notes `<EOF after N bytes sha256 H>`."""
    data = sys.stdin.buffer.read()
    agent.note_stdin(f"<EOF after {len(data)} bytes sha256 {hashlib.sha256(data).hexdigest()}>")


def step_close_output(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    """Let go of the terminal: the pty sees EOF while this process lives on."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)


def step_spawn(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    """Start `argv`; `detach`: double fork + setsid; `ignore`: signals the child ignores."""
    argv = [str(a) for a in arg]
    pid_r, pid_w = os.pipe()
    first = os.fork()
    if first == 0:
        os.close(pid_r)
        if step.get("detach"):
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
        for name in step.get("ignore", []):
            signal.signal(getattr(signal, f"SIG{name}"), signal.SIG_IGN)
        os.write(pid_w, str(os.getpid()).encode())
        os.close(pid_w)
        os.execvp(argv[0], argv)
    os.close(pid_w)
    pid = int(os.read(pid_r, 64) or b"0")
    os.close(pid_r)
    if step.get("detach") or step.get("wait"):
        os.waitpid(first, 0)
    if agent.record_dir is not None and step.get("pid_file"):
        target = agent.record_dir / step["pid_file"]
        target.with_suffix(".tmp").write_text(str(pid))
        target.with_suffix(".tmp").replace(target)  # readers never see a half-written file


def step_ignore(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    for name in arg:
        signal.signal(getattr(signal, f"SIG{name}"), signal.SIG_IGN)


def step_write_file(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    path = Path(arg)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(step.get("text", ""))


def step_snapshot(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    """What a file held while this invocation ran (e.g. the status.md aidd wrote before it)."""
    if agent.record_dir is not None:
        source = Path(arg)
        data = source.read_bytes() if source.is_file() else b"<missing>"
        (agent.record_dir / str(step["as"])).write_bytes(data)


def step_mark(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    """When this happened, on the clocks aidd and the tests share (after the last write)."""
    if agent.record_dir is not None:
        target = agent.record_dir / str(arg)
        target.with_suffix(".tmp").write_text(
            json.dumps({"monotonic": time.monotonic(), "time": time.time()}))
        target.with_suffix(".tmp").replace(target)


def step_wait_file(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    """Silent until `arg` (relative to the cwd) exists, at most `timeout` seconds: a test's
    own event, instead of a sleep that a loaded machine may outrun."""
    deadline = time.monotonic() + float(step.get("timeout", 60))
    while not Path(arg).exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def step_startup_db(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    """opencode's and kilo's start on one local database: `arg` (a path shared by every
    agent) is held for `hold` seconds before any output; an agent starting meanwhile says
    "database is locked" and exits 1, as the real CLIs did with two at once."""
    try:
        fd = os.open(arg, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        agent.write(b"Error: Unexpected error\n\ndatabase is locked\n")
        sys.exit(1)
    os.close(fd)
    time.sleep(float(step.get("hold", 1.0)))
    os.unlink(arg)


def step_die(agent: Agent, arg: Any, step: dict[str, Any]) -> None:
    os.kill(os.getpid(), getattr(signal, f"SIG{arg}"))


STEPS = {
    "print": lambda a, arg, s: a.write(str(arg).encode()),
    "line": lambda a, arg, s: a.write(str(arg).encode() + b"\n"),
    "bytes": lambda a, arg, s: a.write(bytes.fromhex(arg)),
    "json": lambda a, arg, s: a.event(arg),
    "session": lambda a, arg, s: setattr(a, "session", str(arg)),
    "sleep": lambda a, arg, s: time.sleep(float(arg)),
    "exit": lambda a, arg, s: sys.exit(int(arg)),
    "init": step_init,
    "say": step_say,
    "tool": step_tool,
    "finish": step_finish,
    "result": step_result,
    "error": step_error,
    "flood": step_flood,
    "drip": step_drip,
    "echo_stdin": step_echo_stdin,
    "read_stdin": step_read_stdin,
    "spawn": step_spawn,
    "ignore": step_ignore,
    "write_file": step_write_file,
    "snapshot": step_snapshot,
    "die": step_die,
    "wait_file": step_wait_file,
    "close_output": step_close_output,
    "mark": step_mark,
    "startup_db": step_startup_db,
}
# Without a script: a turn that reads a file and says so (a tool call, so it is work).
DEFAULT = [{"init": True}, {"tool": {"name": "read", "input": {"path": "README.md"}}},
           {"say": "ok"}, {"finish": True}]


def claim_index(record_dir: Path | None) -> int:
    if record_dir is None:
        return 0
    index = 0
    while True:
        try:
            os.close(os.open(record_dir / f"claim-{index:03d}", os.O_CREAT | os.O_EXCL))
            return index
        except FileExistsError:
            index += 1


def load_invocation(index: int) -> dict[str, Any]:
    path = os.environ.get("FAKE_AGENT_SCRIPT")
    invocations = json.loads(Path(path).read_text())["invocations"] if path else [DEFAULT]
    entry = invocations[min(index, len(invocations) - 1)]
    return entry if isinstance(entry, dict) else {"steps": entry}


def main() -> None:
    name, args = sys.argv[1], sys.argv[2:]
    if args == ["--version"]:
        print(os.environ.get("FAKE_AGENT_VERSION", VERSIONS.get(name, "0.0.0")))
        return
    if args[:2] == ["session", "list"]:  # opencode/kilo: asked when no sessionID was printed
        print(os.environ.get("FAKE_AGENT_SESSIONS", "[]"))
        return
    if args[:1] == ["export"]:  # opencode/kilo: does that session hold the prompt yet?
        print(os.environ.get("FAKE_AGENT_EXPORT", ""))
        sys.exit(0 if "FAKE_AGENT_EXPORT" in os.environ else 1)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)  # die quietly, as the real CLIs do
    record = os.environ.get("FAKE_AGENT_RECORD")
    record_dir = Path(record) if record else None
    if record_dir is not None:
        record_dir.mkdir(parents=True, exist_ok=True)  # invocation k is counted there
    index = claim_index(record_dir)
    invocation = load_invocation(index)
    agent = Agent(name, index, record_dir)
    mode = invocation.get("stdin", "line" if agent.claude else "all")
    agent.record(read_first_input(agent, mode))
    for step in invocation.get("steps", []):
        key = next(k for k in step if k in STEPS)
        STEPS[key](agent, step[key], step)


if __name__ == "__main__":
    main()
