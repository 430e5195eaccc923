"""Every plain-text file of the shared corpus, with the counts found by reading each file.

How the counts were checked against the files (grep on the file, by hand where needed):
- claude-export: `>`/`❯` prompt lines; tool lines (`⏺ Name(...)`, `  Name(...)` + `⎿`,
  collapsed `Read N files`) = tool turns; the rest of the bullets are assistant text.
- aider: runs of `#### ` lines = user turns (slash commands other than /code, /ask keep
  meta="command"); `<<<<<<< SEARCH` blocks = Edit calls (metadata-aider 24 markers in 23
  blocks, Simple-Calulator 26); `> Applied edit to` lines confirm them or, in Simple-Calulator's
  `whole` edit-format sessions, a whole-file fence naming that file (9 Write calls: 18 + 9 = 27
  edits with a diff); `> Commit` lines = auto-commit turns (14 and 3). The input and llm histories are not transcripts.
- specstory: `_**User` headings outside `<tool-use>` blocks (onotakuy 12: its session reads
  its own SpecStory file, so 38 more headings sit inside tool output); `<tool-use>` blocks
  (onotakuy 270, of which 4 nest a rendered SpecStory file and merge with a neighbour: 266);
  old style `Read file:` lines + search/list `<details>` + ```diff fences + ```bash terminal
  pieces (15+11+21+41, 8+6+3+0); assistant text is cut around each of them.
- cursor-export / gemini-export-md / claude-derived-md / plain-log: role headings
  (`**User**`/`**Cursor**` 8; `## USER`/`## MODEL` 3; `**You:**`/`**Claude:**` 2;
  cctrace `### 👤 User` 202 of which 174 are `📊 Tool Result` blocks, `🔧 Tool Use` 175;
  ticketFlow 22 prompt bullets; vibe-coding 10 `### Prompt`/`### AI` headings; ygo 57
  `# PROMPT`/`# RESPONSE` headings).
- terminal-log: `mini-swe-agent (step N` lines after ANSI removal (4, 9, 18), each a THOUGHT
  and a Bash call, plus the System prompt and the task; two captures where the agent never
  started keep only the task.
- other: a repository digest, not a transcript.
"""

from __future__ import annotations

import pytest
from conftest import CORPUS, corpus_files, needs_corpus

from skill_doctor.decode import decode_file
from skill_doctor.model import Role

# (file, harness, turns, real user turns, assistant turns, tool turns, file edits)
EXPECTED = [
    ("claude-export/aircher_claude-conversation.md", "claude-code-text", 6, 1, 2, 3, 2),
    ("claude-export/algo_claude-20250813-214119-configure-commit-command.txt", "claude-code-text", 67, 8, 13, 46, 7),
    ("claude-export/algo_claude-20250817-215403-leetcode-matching-recommendation.txt", "claude-code-text", 5, 1, 1, 3, 0),
    ("claude-export/llm-safety-checks_claude-cannot-write-file-2.md", "claude-code-text", 8, 3, 3, 2, 0),
    ("claude-export/llm-safety-checks_create-file-with-file-edit-dissalowed.md", "claude-code-text", 15, 5, 6, 4, 0),
    ("aider/3oFiz4_note_app.aider.chat.history.md", "aider", 0, 0, 0, 0, 0),
    ("aider/Simple-Calulator.aider.chat.history.md", "aider", 108, 26, 33, 38, 27),
    ("aider/metadata-aider.aider.chat.history.md", "aider", 74, 12, 25, 37, 23),
    ("aider/zen-mcp-server.aider.chat.history.md", "aider", 8, 0, 0, 0, 0),
    ("specstory/onotakuy_2026-01-03_2d3d-map-webapp-requirements.md", "specstory", 373, 12, 95, 266, 44),
    ("specstory/politipo_2025-03-24_21-17-pandera-integration-in-politipo-library.md", "specstory", 185, 12, 85, 88, 0),
    ("specstory/politipo_2025-03-28_16-14-refining-create-model-instance-for-efficiency.md", "specstory", 34, 4, 13, 17, 0),
    ("cursor-export/waylog_autohotkey-clipboard-ui.md", "cursor-export", 8, 4, 4, 0, 0),
    ("gemini-export-md/mcp-tools-debt_chat_share.md", "gemini-share-md", 3, 1, 2, 0, 0),
    ("plain-log/ticketFlow1_prompt-log.md", "plain-text", 22, 22, 0, 0, 0),
    ("plain-log/vibe-coding-assignment_prompt-log.md", "plain-text", 10, 5, 5, 0, 0),
    # The edits its pasted IDE chat shows as "Edited / main.go / +8 / -0" are tool turns.
    ("plain-log/ygo-interview_prompt-log.md", "plain-text", 77, 29, 38, 10, 0),
    ("claude-derived-md/M-Claude_agent-a577c7c.md", "claude-derived-md", 2, 1, 1, 0, 0),
    ("claude-derived-md/cctrace-js_conversation_full.md", "claude-derived-md", 301, 28, 98, 175, 38),
    ("terminal-log/mini-swe-agent_git-multibranch.log", "terminal-log", 1, 1, 0, 0, 0),
    ("terminal-log/mini-swe-agent_hello-world.log", "mini-swe-agent-log", 10, 1, 4, 4, 0),
    ("terminal-log/mini-swe-agent_heterogeneous-dates.log", "mini-swe-agent-log", 20, 1, 9, 9, 1),  # `cat <<EOF > calculate_avg_temp.py` writes a file
    ("terminal-log/mini-swe-agent_nginx-request-logging.log", "mini-swe-agent-log", 38, 1, 18, 18, 4),  # four `cat <<EOF > f` heredoc writes (nginx conf twice, two html pages)
    ("terminal-log/openhands_extract-safely.log", "terminal-log", 1, 1, 0, 0, 0),
]
NOT_TRANSCRIPTS = ["aider/Simple-Calulator.aider.input.history",
                   "aider/Simple-Calulator.aider.llm.history", "other/SEAR_claude-code.txt"]
TEXT_FOLDERS = ("claude-export", "aider", "specstory", "cursor-export", "gemini-export-md",
                "plain-log", "claude-derived-md", "terminal-log", "other")


@needs_corpus
def test_every_plain_text_corpus_file_is_covered():
    listed = {row[0] for row in EXPECTED} | set(NOT_TRANSCRIPTS)
    present = {p.relative_to(CORPUS).as_posix() for folder in TEXT_FOLDERS
               for p in corpus_files(folder)}
    assert present == listed


@needs_corpus
@pytest.mark.parametrize("name, harness, turns, users, assistants, tools, edits", EXPECTED,
                         ids=[row[0] for row in EXPECTED])
def test_corpus_counts(name, harness, turns, users, assistants, tools, edits):
    t = decode_file(CORPUS / name)
    assert t.problem is None and not t.not_a_transcript
    assert t.harness == harness
    got = (len(t.turns),
           sum(1 for x in t.turns if x.role is Role.USER and x.meta is None),
           sum(1 for x in t.turns if x.role is Role.ASSISTANT),
           sum(1 for x in t.turns if x.role is Role.TOOL),
           sum(len(x.edits) for x in t.turns))
    assert got == (turns, users, assistants, tools, edits)
    assert [x.index for x in t.turns] == list(range(1, len(t.turns) + 1))
    assert all(x.line >= 1 for x in t.turns)
    lines = [x.line for x in t.turns]
    assert lines == sorted(lines)  # turns come in file order


@needs_corpus
@pytest.mark.parametrize("name", NOT_TRANSCRIPTS)
def test_corpus_non_transcripts(name):
    t = decode_file(CORPUS / name)
    assert t.not_a_transcript and t.turns == ()
    assert t.problem is not None and t.problem.line == 1 and t.problem.context


@needs_corpus
def test_tui_details():
    t = decode_file(CORPUS / "claude-export/algo_claude-20250813-214119-configure-commit-command.txt")
    assert t.cwd == "/Users/*****/output/github/algo"
    read = next(x for x in t.turns if x.tool_name == "Read")
    assert read.tool_input == {"file_path": "CLAUDE.md"}
    failed_read = [x for x in t.turns if x.tool_name == "Read" and x.is_error]
    assert [x.tool_output for x in failed_read] == ["Error reading file"]
    edit = next(x for x in t.turns if x.tool_name == "Edit")
    assert edit.edits[0].path == "CLAUDE.md"
    assert "- Creates commit with AI-generated message based on changes" in edit.tool_input["new_string"]


@needs_corpus
def test_mini_swe_exit_codes():
    t = decode_file(CORPUS / "terminal-log/mini-swe-agent_hello-world.log")
    bash = [x for x in t.turns if x.tool_name == "Bash"]
    assert [x.tool_input["command"] for x in bash] == [
        'echo "Hello, world!" > hello.txt', "cat hello.txt", "ls -la hello.txt",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]
    assert [x.exit_code for x in bash] == [0, 0, 0, None]
    assert bash[1].tool_output == "Hello, world!"
