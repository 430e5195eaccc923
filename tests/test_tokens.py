"""Tokens and cost: counted once per model call in every harness that logs them, priced from
the shipped table or the rubric's, "unknown" for a model no table knows, and shown in
report.json, the page's session strip, check's JSON and batch's summary and aggregate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CORPUS, FIXTURES, needs_corpus, run_cli
from sessionkit import claude_jsonl
from skill_doctor import rubric as rubric_mod, tokens
from skill_doctor.decode import decode_file
from skill_doctor.model import Transcript, Usage

SONNET = {"input_tokens": 10, "output_tokens": 200, "cache_read_input_tokens": 1_000_000,
          "cache_creation_input_tokens": 2000}


def _session(tmp_path: Path, model: str = "claude-sonnet-4-5-20250929") -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text(claude_jsonl([
        {"user": "Fix the typo in README.md"},
        {"tool": "Read", "input": {"file_path": "README.md"}, "output": "teh", "model": model,
         "usage": SONNET},
        {"assistant": "Fixed.", "model": model,
         "usage": {"input_tokens": 5, "output_tokens": 20}},
    ]), encoding="utf-8")
    return path


def test_claude_code_split_message_counts_usage_once(tmp_path):
    # One API message over three lines, each repeating its usage (the last with the final
    # output count): one call, the largest count of each kind, never the sum.
    lines = [{"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
              "timestamp": "2026-01-01T10:00:00Z",
              "message": {"role": "user", "content": "hello"}}]
    for i, (block, out) in enumerate([({"type": "thinking", "thinking": "x"}, 3),
                                      ({"type": "text", "text": "Hi"}, 3),
                                      ({"type": "text", "text": "there"}, 40)]):
        lines.append({"type": "assistant", "uuid": f"a{i}", "parentUuid": "u1", "sessionId": "s",
                      "timestamp": f"2026-01-01T10:00:0{i + 1}Z",
                      "message": {"id": "msg_1", "role": "assistant", "model": "claude-opus-4-5",
                                  "content": [block],
                                  "usage": {"input_tokens": 7, "output_tokens": out,
                                            "cache_read_input_tokens": 900}}})
    path = tmp_path / "split.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    t = decode_file(path)
    assert t.usage == (Usage(turn=2, input=7, output=40, cache_read=900,
                             model="claude-opus-4-5"),)


def test_codex_token_count_repeats_are_not_summed_and_cache_is_split_out(tmp_path):
    usage1 = {"input_tokens": 3000, "cached_input_tokens": 2000, "output_tokens": 60,
              "reasoning_output_tokens": 10, "total_tokens": 3060}
    usage2 = {"input_tokens": 5000, "cached_input_tokens": 4000, "output_tokens": 100,
              "reasoning_output_tokens": 0, "total_tokens": 5100}
    total2 = {k: usage1[k] + usage2[k] for k in usage1}

    def ev(payload):
        return {"timestamp": "2026-01-01T10:00:00Z", "type": "event_msg", "payload": payload}

    records = [
        {"timestamp": "2026-01-01T10:00:00Z", "type": "session_meta", "payload": {"id": "c1"}},
        {"timestamp": "2026-01-01T10:00:00Z", "type": "turn_context",
         "payload": {"model": "gpt-5-codex", "cwd": "/p"}},
        ev({"type": "token_count", "info": None}),
        {"timestamp": "2026-01-01T10:00:01Z", "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "list files"}]}},
        {"timestamp": "2026-01-01T10:00:02Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant",
                     "content": [{"type": "output_text", "text": "ok"}]}},
        ev({"type": "token_count", "info": {"total_token_usage": usage1,
                                            "last_token_usage": usage1}}),
        ev({"type": "token_count", "info": {"total_token_usage": usage1,
                                            "last_token_usage": usage1}}),  # a repeat
        {"timestamp": "2026-01-01T10:00:03Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant",
                     "content": [{"type": "output_text", "text": "done"}]}},
        ev({"type": "token_count", "info": {"total_token_usage": total2,
                                            "last_token_usage": usage2}}),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    t = decode_file(path)
    assert t.usage == (Usage(1, input=1000, output=60, cache_read=2000, model="gpt-5-codex"),
                       Usage(3, input=1000, output=100, cache_read=4000, model="gpt-5-codex"))
    summary = tokens.summarize(t)
    assert summary.counts == {"input": 2000, "output": 160, "cache_read": 6000,
                              "cache_write": 0}
    # gpt-5 list price: 1.25 input, 10 output, 0.125 cached, per million
    assert summary.cost_usd == pytest.approx((2000 * 1.25 + 160 * 10 + 6000 * 0.125) / 1e6)


def test_codex_exec_json_turn_completed_usage():
    t = decode_file(FIXTURES / "codex" / "exec-json.jsonl")
    assert [(u.input, u.output, u.cache_read) for u in t.usage] == [(24763 - 24448, 122, 24448)]


def test_gemini_saved_chat_and_stream_stats(tmp_path):
    chat = {"sessionId": "g1", "projectHash": "ab12", "startTime": "2026-01-01T10:00:00Z", "messages": [
        {"id": "m1", "type": "user", "content": "hi", "timestamp": "2026-01-01T10:00:01Z"},
        {"id": "m2", "type": "gemini", "content": "hello", "model": "gemini-2.5-pro",
         "timestamp": "2026-01-01T10:00:02Z",
         "tokens": {"input": 16506, "output": 92, "cached": 13780, "thoughts": 253, "tool": 0,
                    "total": 16851}}]}
    path = tmp_path / "session-1.json"
    path.write_text(json.dumps(chat), encoding="utf-8")
    assert decode_file(path).usage == (Usage(2, input=16506 - 13780, output=92 + 253,
                                             cache_read=13780, model="gemini-2.5-pro"),)
    stream = [{"type": "init", "timestamp": "2026-01-01T10:00:00Z", "session_id": "g2",
               "model": "gemini-3-pro-preview"},
              {"type": "message", "role": "user", "content": "hi"},
              {"type": "message", "role": "assistant", "content": "hello"},
              {"type": "result", "status": "success",
               "stats": {"total_tokens": 2164148, "input_tokens": 2152077, "output_tokens": 6375,
                         "cached": 1379815, "input": 772262}}]
    path = tmp_path / "stream.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in stream), encoding="utf-8")
    # the run's total, pinned to no turn; its `input` is the uncached part
    assert decode_file(path).usage == (Usage(0, input=772262, output=6375, cache_read=1379815,
                                             model="gemini-3-pro-preview"),)


@needs_corpus
def test_pi_and_corpus_sessions_log_tokens():
    for rel in ("pi/pi-mono_session.jsonl", "claude-code/M-Claude_21037e11-89de.jsonl",
                "codex/Kooksun_Lotto645_2025-11-07T09-19-52.jsonl"):
        t = decode_file(CORPUS / rel)
        summary = tokens.summarize(t)
        assert summary is not None and summary.total > 0, rel
        assert all(1 <= u.turn <= len(t.turns) for u in t.usage), rel
        assert summary.cost_usd is not None and summary.cost_usd > 0, rel


def test_unknown_model_costs_unknown_and_rubric_prices_fix_it(tmp_path, capsys):
    session = _session(tmp_path, model="acme-coder-9")
    code, out, _ = run_cli(["report", str(session), "-o", "r1"], tmp_path, capsys)
    assert code == 0
    usage = json.loads((tmp_path / "r1" / "report.json").read_text())["usage"]
    assert usage["cost_usd"] == "unknown"
    assert usage["unpriced_models"] == ["acme-coder-9"]
    assert "cost unknown (no price for acme-coder-9)" in out
    page = (tmp_path / "r1" / "report.html").read_text()
    assert "Tokens" in page and "cost unknown" in page

    (tmp_path / "team.yaml").write_text(
        "prices:\n  - {model: 'acme-coder-*', input: 1, output: 2, cache_read: 0.5}\n",
        encoding="utf-8")
    code, _, _ = run_cli(["report", str(session), "-o", "r2", "--rubric", "team.yaml"],
                         tmp_path, capsys)
    usage = json.loads((tmp_path / "r2" / "report.json").read_text())["usage"]
    # 15 input, 220 output, 1,000,000 cache read and 2,000 cache write (at the input price)
    assert usage["cost_usd"] == round((15 * 1 + 220 * 2 + 1_000_000 * 0.5 + 2000 * 1) / 1e6, 4)
    assert usage["prices"]["from"] == "rubric and default table"


def test_report_json_tokens_per_session_and_per_turn(tmp_path, capsys):
    session = _session(tmp_path)
    run_cli(["report", str(session), "-o", "r"], tmp_path, capsys)
    usage = json.loads((tmp_path / "r" / "report.json").read_text())["usage"]
    assert usage["input_tokens"] == 15 and usage["output_tokens"] == 220
    assert usage["cache_read_tokens"] == 1_000_000 and usage["cache_write_tokens"] == 2000
    assert usage["calls"] == 2
    assert [t["turn"] for t in usage["turns"]] == [2, 3]
    # claude-sonnet-4*: 3 input, 15 output, 0.3 cache read, 3.75 cache write
    assert usage["cost_usd"] == round((15 * 3 + 220 * 15 + 1e6 * 0.3 + 2000 * 3.75) / 1e6, 4)
    assert usage["prices"]["as_of"] == tokens.default_table().as_of


def test_harness_without_token_counts_says_so(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text(claude_jsonl([{"user": "hi"}, {"assistant": "hello"}]), encoding="utf-8")
    run_cli(["report", str(path), "-o", "r"], tmp_path, capsys)
    assert json.loads((tmp_path / "r" / "report.json").read_text())["usage"] is None
    assert "not logged by the harness" in (tmp_path / "r" / "report.html").read_text()


def test_check_json_and_batch_carry_tokens(tmp_path, capsys):
    session = _session(tmp_path)
    code, out, _ = run_cli(["check", str(session), "--format", "json"], tmp_path, capsys)
    usage = json.loads(out)["sessions"][0]["usage"]
    assert usage["total_tokens"] == 15 + 220 + 1_000_000 + 2000
    assert "turns" not in usage  # check's JSON stays per session
    other = tmp_path / "t.jsonl"
    other.write_text(claude_jsonl([{"user": "hi"}, {"assistant": "hello"}],
                                  session_id="other"), encoding="utf-8")
    code, out, _ = run_cli(["batch", str(session), str(other), "-o", "b"], tmp_path, capsys)
    assert code == 0 and "Tokens: 1M over 1 session that log them; cost $" in out
    figures = json.loads((tmp_path / "b" / "aggregate.json").read_text())["usage"]
    assert figures["sessions_with_tokens"] == 1 and figures["sessions_priced"] == 1
    assert figures["total_tokens"] == 1_002_235
    lines = (tmp_path / "b" / "summary.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["usage"]["calls"] == 2
    assert json.loads(lines[1])["usage"] is None
    assert "Tokens: 1M over 1 session" in (tmp_path / "b" / "index.html").read_text()


@pytest.mark.parametrize("prices, key", [
    ("prices: {model: x}", "prices"),
    ("prices:\n  - {model: x, input: 1}", "prices.0"),
    ("prices:\n  - {model: x, input: 1, output: -2}", "prices.0.output"),
    ("prices:\n  - {model: x, input: 1, output: 2, colour: red}", "prices.0.colour"),
])
def test_rubric_prices_are_validated(tmp_path, capsys, prices, key):
    (tmp_path / "bad.yaml").write_text(prices + "\n", encoding="utf-8")
    code, _, err = run_cli(["rubric", "validate", "bad.yaml"], tmp_path, capsys)
    assert code == 2 and f"bad.yaml:{2 if '.' in key else 1}: {key}: " in err, err


def test_shipped_table_is_dated_and_valid():
    table = tokens.default_table()
    assert len(table.as_of) == 10 and table.as_of[4] == "-"
    assert table.lookup("claude-opus-4-5-20251101").input == 5
    assert table.lookup("anthropic/claude-sonnet-4-5").output == 15
    assert table.lookup("no-such-model") is None
    assert rubric_mod.load().prices == ()


def test_summary_of_transcript_without_model_is_unknown():
    t = Transcript(source="x", harness="h", usage=(Usage(1, input=5),))
    summary = tokens.summarize(t)
    assert summary.cost_usd is None and summary.unpriced == ("not recorded",)


def test_opencode_and_pi_tokens(tmp_path):
    t = decode_file(FIXTURES / "opencode" / "export.json")
    assert [(u.turn, u.input, u.output, u.model) for u in t.usage] == [
        (2, 100, 50, "claude-sonnet-4-5")]
    pi = [{"type": "session", "id": "p1", "timestamp": "2026-01-01T10:00:00Z", "cwd": "/p"},
          {"type": "message", "timestamp": "2026-01-01T10:00:01Z",
           "message": {"role": "user", "content": "hi"}},
          {"type": "message", "timestamp": "2026-01-01T10:00:02Z",
           "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}],
                       "model": "claude-opus-4-5", "stopReason": "stop",
                       "usage": {"input": 3, "output": 40, "cacheRead": 9000,
                                 "cacheWrite": 500, "totalTokens": 9543}}}]
    path = tmp_path / "pi.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in pi), encoding="utf-8")
    assert decode_file(path).usage == (Usage(2, input=3, output=40, cache_read=9000,
                                             cache_write=500, model="claude-opus-4-5"),)


@needs_corpus
def test_swe_agent_run_totals():
    # SWE-agent logs only the run's totals (model_stats): pinned to no turn
    t = decode_file(CORPUS / "swe-agent-traj" / "sweagenttestrepo-1c2844.traj")
    assert t.usage == (Usage(0, input=7141, output=243),)
    assert tokens.summarize(t).cost_usd is None  # no model named: the cost is unknown


def test_hostile_token_fields_read_as_zero(tmp_path):
    lines = [{"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
              "message": {"role": "user", "content": "hi"}}]
    for i, usage in enumerate([{"input_tokens": "9" * 400}, {"input_tokens": -5},
                               {"input_tokens": True}, {"input_tokens": 1e300},
                               ["not", "a", "dict"], {"input_tokens": 4, "output_tokens": 2}]):
        lines.append({"type": "assistant", "uuid": f"a{i}", "parentUuid": "u1", "sessionId": "s",
                      "message": {"id": f"m{i}", "role": "assistant", "model": "x",
                                  "content": [{"type": "text", "text": f"r{i}"}],
                                  "usage": usage}})
    path = tmp_path / "h.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    assert [(u.input, u.output) for u in decode_file(path).usage] == [(4, 2)]


def test_per_turn_tokens_sum_each_turns_calls_in_turn_order():
    # Records arrive out of turn order (a request learnt at the end, a call pinned to the
    # last turn); each turn's calls are summed, and the list is read like the tuples it
    # stands for: iterated, indexed from either end, sliced.
    usages = (Usage(3, 1, 2, 3, 4), Usage(1, 10, 20, 30, 40), Usage(3, 100, 0, 0, 1),
              Usage(0, 5, 5, 5, 5), Usage(2, 7, 0, 0, 0))
    turns = tokens.TurnTokens(usages)
    expected = [(0, (5, 5, 5, 5)), (1, (10, 20, 30, 40)), (2, (7, 0, 0, 0)),
                (3, (101, 2, 3, 5))]
    assert list(turns) == expected and len(turns) == 4
    assert turns[0] == expected[0] and turns[-1] == expected[-1]
    assert turns[1:3] == expected[1:3] and turns[3:10] == expected[3:]
    with pytest.raises(IndexError):
        turns[4]
    assert tokens.turns_json(turns[3:]) == [{"turn": 3, "input_tokens": 101, "output_tokens": 2,
                                            "cache_read_tokens": 3, "cache_write_tokens": 5}]


def test_per_turn_sums_past_a_machine_word_are_kept_whole():
    # Every count is bounded when decoded, but a hostile log can give one turn thousands of
    # calls at the bound: the sum must come out whole, not wrap or fail.
    big = 10**15
    usages = tuple(Usage(1, big) for _ in range(10_000)) + (Usage(2, 1),)
    assert list(tokens.TurnTokens(usages)) == [(1, (10**19, 0, 0, 0)), (2, (1, 0, 0, 0))]
