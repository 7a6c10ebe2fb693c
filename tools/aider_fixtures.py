"""Regenerate tests/fixtures/aider/ by running aider itself (its Coder, commands, InputOutput and history writers)
on a scratch git repository, with the model stubbed: every reply is scripted here and the usage is made up
(characters / 4), so nothing leaves the machine.

    python -m venv VENV && VENV/bin/pip install aider-chat==0.86.2
    PATH=VENV/bin:$PATH VENV/bin/python tools/aider_fixtures.py      (the stand-in linter runs as "python lint.py")

Writes ``.aider.chat.history.md`` and ``.aider.llm.history`` exactly as aider writes them, five sessions (each a
restart): an edit applied and committed, a reply that mentions a file (added, so aider asks the model again), a
malformed edit (aider sends the error back), ``/run`` output added to the chat; a command that never reaches the
model (``/tokens``) and ``/clear``; a session that restores the chat history (``--restore-chat-history``) with a
history budget small enough that aider summarizes it; architect mode (the editor model makes the edit); an edit
the linter rejects (the lint errors go back to the model) and a request the person interrupts.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("AIDER_ANALYTICS", "false")

from aider import models  # noqa: E402
from aider import prompts  # noqa: E402
from aider.coders import Coder  # noqa: E402
from aider.commands import SwitchCoder  # noqa: E402
from aider.io import InputOutput  # noqa: E402
from aider.llm import litellm  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "aider"

FENCE = "```"
INTERRUPT = "<interrupt>"  # the stub raises KeyboardInterrupt, as Control-C does while aider waits for the model
REPLIES = [
    # session 1: the fix, as a SEARCH/REPLACE edit
    f"The bug is in `add()`: it subtracts.\n\ncalc.py\n{FENCE}python\n<<<<<<< SEARCH\n    return a - b\n=======\n"
    f"    return a + b\n>>>>>>> REPLACE\n{FENCE}\n",
    # a reply that names a file not yet in the chat: aider offers to add it and asks again
    "The tests call it from tests_calc.py, so that file may need an update too.",
    "Now that I can see tests_calc.py: it already expects `add(2, 3) == 5`, no change needed.",
    # an edit whose SEARCH text is not in the file: aider sends the failure back
    f"calc.py\n{FENCE}python\n<<<<<<< SEARCH\n    return a * b  # missing\n=======\n    return a * b\n"
    f">>>>>>> REPLACE\n{FENCE}\n",
    "Sorry, that function is already correct; nothing to change.",
    # after /run
    "The test passes now.",
    # session 2, after /clear
    "# A heading the model wrote\n\n> A quoted line the model wrote.\n\nThat is all about the project.",
    # session 3: the restored history summarized, an edit, one more question
    f"calc.py\n{FENCE}python\n<<<<<<< SEARCH\ndef mul(a, b):\n=======\ndef mul(a: int, b: int) -> int:\n"
    f">>>>>>> REPLACE\n{FENCE}\n",
    "Yes, both functions are typed now.",
    # session 4, architect mode: the architect's plan, then the editor model's edit
    "Rename `mul` to `multiply` in calc.py; nothing else changes.",
    f"calc.py\n{FENCE}python\n<<<<<<< SEARCH\ndef mul(a: int, b: int) -> int:\n=======\n"
    f"def multiply(a: int, b: int) -> int:\n>>>>>>> REPLACE\n{FENCE}\n",
    # session 5: an edit the linter rejects (aider sends the lint errors back), then the fix
    f"calc.py\n{FENCE}python\n<<<<<<< SEARCH\ndef add(a, b):\n=======\nimport os\n\n\ndef add(a, b):\n"
    f">>>>>>> REPLACE\n{FENCE}\n",
    "The unused import can stay out; I will not add it again.",
    # session 5: the person interrupts the next request (the stub raises KeyboardInterrupt), then asks again
    INTERRUPT,
    "Here is the short answer.",
]
SUMMARIZED: list[bool] = []
SUMMARY = "I asked you to type mul(); you added int annotations to it in calc.py."
COMMIT_MESSAGE = "fix: add() adds instead of subtracting"


#: the stand-in linter aider runs on edited files: reports an unused ``import os`` the way flake8 does
LINTER = """import sys
from pathlib import Path

bad = [p for p in sys.argv[1:] if "import os" in Path(p).read_text()]
for path in bad:
    print(f"{path}:1:1: F401 'os' imported but unused")
sys.exit(1 if bad else 0)
"""


def fake_send_completion(self, messages, functions, stream, temperature=None):
    """The stub model: the next scripted reply (the commit-message request gets a fixed message)."""
    if "commit message" in str(messages[0].get("content", "")):
        text = COMMIT_MESSAGE
    elif messages[0].get("content") == prompts.summarize:
        text = SUMMARY
        SUMMARIZED.append(True)
    else:
        text = REPLIES.pop(0)
        if text == INTERRUPT:
            raise KeyboardInterrupt
    prompt = sum(len(str(m.get("content", ""))) for m in messages) // 4
    response = litellm.ModelResponse(
        choices=[{"message": {"role": "assistant", "content": text}, "finish_reason": "stop", "index": 0}],
        usage={"prompt_tokens": prompt, "completion_tokens": len(text) // 4, "total_tokens": prompt + len(text) // 4},
        model=self.name,
    )
    return hashlib.sha1(text.encode()), response


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def session(repo: Path, inputs: list[str], edit_format: str = "diff", history_tokens: int | None = None,
            lint_cmd: str | None = None) -> None:
    """One aider run: announcements, then each input as the interactive loop handles it. With ``history_tokens``
    the run restores the chat history from the transcript and summarizes it above that many tokens; with
    ``lint_cmd`` aider lints every edited Python file with it."""
    io = InputOutput(pretty=False, yes=True, fancy_input=False, chat_history_file=repo / ".aider.chat.history.md",
                     llm_history_file=repo / ".aider.llm.history", input_history_file=repo / ".aider.input.history",
                     root=str(repo))
    io.tool_output("aider --model gpt-4o --no-stream --map-tokens 0", log_only=True)
    model = models.Model("gpt-4o", weak_model="gpt-4o-mini", editor_model="gpt-4o-mini")
    if history_tokens is not None:
        model.max_chat_history_tokens = history_tokens
    coder = Coder.create(main_model=model, edit_format=edit_format, io=io, fnames=[str(repo / "calc.py")], stream=False,
                         map_tokens=0, auto_lint=lint_cmd is not None, auto_test=False, suggest_shell_commands=False,
                         detect_urls=False, restore_chat_history=history_tokens is not None,
                         lint_cmds={"python": lint_cmd} if lint_cmd else None)
    coder.root = str(repo)
    coder.show_announcements()
    for text in inputs:
        io.user_input(text)
        try:
            coder.run_one(text, preproc=True)
        except SwitchCoder:
            pass


def main() -> None:
    models.Model.send_completion = fake_send_completion
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        git(repo, "init", "-q")
        git(repo, "config", "user.email", "dev@example.com")
        git(repo, "config", "user.name", "Dev")
        (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
        (repo / "tests_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
        (repo / ".gitignore").write_text(".aider*\n")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "start")
        os.chdir(repo)
        session(repo, ["Fix add() in calc.py,\nit returns the wrong sum.", "Which tests cover it?",
                       "Also make mul() safe.", "/run python -c \"print('ok')\"", "Does the test pass?"])
        session(repo, ["/tokens", "/clear", "Summarize the project."])
        session(repo, ["Add type hints to mul().", "Are both functions typed?"], history_tokens=40)
        session(repo, ["Rename mul to multiply."], edit_format="architect")
        (repo / "lint.py").write_text(LINTER)
        session(repo, ["Import os in calc.py.", "Explain calc.py.", "Explain it briefly."],
                lint_cmd=f"{Path(sys.executable).name} lint.py")
        OUT.mkdir(parents=True, exist_ok=True)
        for name in (".aider.chat.history.md", ".aider.llm.history"):
            (OUT / name.lstrip(".")).write_text((repo / name).read_text(encoding="utf-8"), encoding="utf-8")
    if REPLIES or not SUMMARIZED:
        sys.exit(f"{len(REPLIES)} scripted replies were not used, summarized: {bool(SUMMARIZED)}: the run did not go "
                 "as planned")


if __name__ == "__main__":
    main()
