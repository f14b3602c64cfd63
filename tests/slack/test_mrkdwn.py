import re

import pytest

from app.slack.mrkdwn import HR, format_reply, neutralize_broadcasts, split_message, to_mrkdwn

Z = "\u200b"


def _squash(text: str) -> str:
    return re.sub(r"\s", "", text)


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("**bold** and __also__", "*bold* and *also*"),
        ("*it* and _it2_", "_it_ and _it2_"),
        ("~~gone~~ now", "~gone~ now"),
        ("***both***", "*_both_*"),
        ("**bold with *italic* inside**", "*bold with _italic_ inside*"),
        ("[docs](https://example.com/a_b_c)", "<https://example.com/a_b_c|docs>"),
        ("[**重要**](https://e.example/w_(x)_y)", "<https://e.example/w_(x)_y|重要>"),
        ("![diagram](https://img.example/x.png)", "<https://img.example/x.png|diagram>"),
        ("![](https://img.example/x.png)", "<https://img.example/x.png>"),
        ("# Title", "*Title*"),
        ("### **Bold** title ###", "*Bold title*"),
        ("- a\n* b\n+ c\n  - nested", "• a\n• b\n• c\n  • nested"),
        ("- [ ] todo\n- [x] done", "• ☐ todo\n• ☑ done"),
        ("1. one\n2) two", "1. one\n2) two"),
        ("> quoted **text**\n> - item", "> quoted *text*\n> • item"),
        ("---", HR),
        ("snake_case_name and 2*3*4 and 2 * 3", "snake_case_name and 2*3*4 and 2 * 3"),
        ("see https://example.com/a_b_c now", "see https://example.com/a_b_c now"),
        ("a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"),
        ("line one  \n\n\nline two", "line one\n\n\nline two"),
    ],
)
def test_to_mrkdwn_conversions(markdown: str, expected: str) -> None:
    assert to_mrkdwn(markdown) == expected


def test_japanese_text_gets_invisible_boundaries_around_markers() -> None:
    markdown = "これは**重要**です。_注意_して、~~古い~~情報は無視。"
    expected = f"これは{Z}*重要*{Z}です。{Z}_注意_{Z}して、{Z}~古い~{Z}情報は無視。"
    assert to_mrkdwn(markdown) == expected


def test_japanese_heading_list_and_quote() -> None:
    markdown = "## 今日の予定\n\n- 会議は**10時**から\n1. 資料を読む\n> 引用です"
    expected = f"*今日の予定*\n\n• 会議は{Z}*10時*{Z}から\n1. 資料を読む\n> 引用です"
    assert to_mrkdwn(markdown) == expected


def test_ascii_punctuation_needs_no_boundary() -> None:
    assert to_mrkdwn("(**bold**), **重要:** 注意") == "(*bold*), *重要:* 注意"


def test_existing_slack_tokens_are_untouched() -> None:
    text = (
        "hi <@U123> see <#C123|general> and <https://x.example/a_b?q=1&r=2|リンク> "
        "<mailto:a@b.example|mail> <!date^1392734382^{date}|Feb 18>"
    )
    assert to_mrkdwn(text) == text


def test_slack_token_inside_bold_and_next_to_japanese() -> None:
    assert to_mrkdwn("**<@U123>**さん") == f"*<@U123>*{Z}さん"


def test_inline_code_is_kept_verbatim_except_entities() -> None:
    assert to_mrkdwn("use `**x** [a](b) _z_ <y>` now") == "use `**x** [a](b) _z_ &lt;y&gt;` now"


def test_inline_code_next_to_japanese() -> None:
    assert to_mrkdwn("関数`run()`を呼ぶ") == f"関数{Z}`run()`{Z}を呼ぶ"


def test_fenced_code_block_is_verbatim_and_language_tag_dropped() -> None:
    markdown = (
        "before **b**\n```python\nx = **y**  # _z_\n[a](b)\n- item\n# not heading\n```\nafter"
    )
    expected = "before *b*\n```\nx = **y**  # _z_\n[a](b)\n- item\n# not heading\n```\nafter"
    assert to_mrkdwn(markdown) == expected


def test_fenced_code_escapes_only_slack_control_characters() -> None:
    assert to_mrkdwn("```\nif a<b && c>d:\n```") == "```\nif a&lt;b &amp;&amp; c&gt;d:\n```"


def test_tilde_fence_indented_fence_and_unclosed_fence() -> None:
    assert to_mrkdwn("~~~sh\nls ~~x~~\n~~~") == "```\nls ~~x~~\n```"
    assert to_mrkdwn("- step\n   ```js\n   let x = 1;\n   ```") == "• step\n```\nlet x = 1;\n```"
    assert to_mrkdwn("```\nprint(1)") == "```\nprint(1)\n```"


def test_table_is_rendered_as_readable_rows() -> None:
    markdown = "| 名前 | 値 |\n|:---|---:|\n| a | **b** |\n| <https://x|y> | `p|q` |\n\nnext"
    expected = "*名前* | *値*\na | *b*\n<https://x|y> | `p|q`\n\nnext"
    assert to_mrkdwn(markdown) == expected


def test_pipe_line_before_horizontal_rule_is_not_a_table() -> None:
    assert to_mrkdwn("a | b\n---") == f"a | b\n{HR}"


@pytest.mark.parametrize(
    ("ping", "expected"),
    [
        ("<!channel>", f"@{Z}channel"),
        ("<!here>", f"@{Z}here"),
        ("<!everyone>", f"@{Z}everyone"),
        ("<!here|here>", f"@{Z}here"),
        ("<!channel|@channel>", f"@{Z}channel"),
        ("<!everyone|everyone>", f"@{Z}everyone"),
        ("<!subteam^S123>", f"@{Z}S123"),
        ("<!subteam^S123|@team>", f"@{Z}team"),
    ],
)
def test_broadcast_tokens_are_neutralized(ping: str, expected: str) -> None:
    out = neutralize_broadcasts(f"注意: {ping} 確認して")
    assert out == f"注意: {expected} 確認して"
    assert "<!" not in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@channel hi", f"@{Z}channel hi"),
        ("hey @here.", f"hey @{Z}here."),
        ("@Everyone!", f"@{Z}Everyone!"),
        ("@hereの皆さん", f"@{Z}hereの皆さん"),
    ],
)
def test_bare_broadcast_words_are_neutralized(text: str, expected: str) -> None:
    assert neutralize_broadcasts(text) == expected


def test_neutralize_leaves_user_mentions_emails_and_dates_alone() -> None:
    text = "<@U123> <#C1|general> mail@here.com @heres <!date^1392734382^{date}|Feb 18>"
    assert neutralize_broadcasts(text) == text


def test_split_short_text_is_one_chunk_and_blank_is_none() -> None:
    assert split_message("こんにちは", limit=20) == ["こんにちは"]
    assert split_message("\n\nhello\n", limit=20) == ["hello"]
    assert split_message("", limit=20) == []
    assert split_message(" \n\n ", limit=20) == []


def test_split_rejects_tiny_limit() -> None:
    with pytest.raises(ValueError):
        split_message("abc", limit=5)


def test_split_prefers_paragraphs_over_lines() -> None:
    text = "aaa aaa\nbbb bbb\n\nccc ccc\nddd ddd"
    assert split_message(text, limit=26) == ["aaa aaa\nbbb bbb", "ccc ccc\nddd ddd"]


def test_split_prefers_lines_over_spaces() -> None:
    text = "\n".join(["alpha beta gamma"] * 5)
    pair = "alpha beta gamma\nalpha beta gamma"
    assert split_message(text, limit=40) == [pair, pair, "alpha beta gamma"]


def test_split_on_spaces_when_no_line_breaks() -> None:
    text = "word " * 100
    chunks = split_message(text, limit=50)
    assert all(len(c) <= 50 for c in chunks)
    assert all(c == c.strip() for c in chunks)
    assert " ".join(chunks) == text.strip()


def test_split_japanese_after_full_stop() -> None:
    text = "これは一文です。" * 20
    chunks = split_message(text, limit=50)
    assert chunks == ["これは一文です。" * 6] * 3 + ["これは一文です。" * 2]


def test_split_hard_cuts_without_tearing_slack_tokens() -> None:
    assert split_message("a" * 50, limit=20) == ["a" * 20, "a" * 20, "a" * 10]
    text = "a" * 25 + "<https://example.com/abc|link>"
    assert split_message(text, limit=40) == ["a" * 25, "<https://example.com/abc|link>"]


def test_split_moves_a_fitting_code_block_whole_to_the_next_chunk() -> None:
    text = "intro line\n```\ncode a\ncode b\n```\nafter"
    assert split_message(text, limit=30) == ["intro line", "```\ncode a\ncode b\n```\nafter"]


def test_split_reopens_fence_of_a_long_code_block() -> None:
    body = "\n".join(f"line {i:02d}" for i in range(30))
    chunks = split_message(f"```\n{body}\n```", limit=60)
    assert len(chunks) > 1
    assert all(len(c) <= 60 for c in chunks)
    assert all(c.startswith("```\n") and c.endswith("\n```") for c in chunks)
    assert "\n".join(c[4:-4] for c in chunks) == body


def test_split_hard_cuts_a_code_line_longer_than_the_limit() -> None:
    chunks = split_message("```\n" + "a" * 50 + "\n```", limit=20)
    assert chunks == ["```\n" + "a" * 12 + "\n```"] * 4 + ["```\naa\n```"]


def test_split_preserves_content_of_mixed_text() -> None:
    paragraphs = [f"段落{i}です。" + "テキスト " * (i % 7 + 3) for i in range(40)]
    code = "```\n" + "\n".join(f"print({i})" for i in range(60)) + "\n```"
    text = "\n\n".join([*paragraphs[:20], code, *paragraphs[20:]])
    chunks = split_message(text, limit=200)
    assert all(0 < len(c) <= 200 for c in chunks)
    joined = "".join(chunks)
    assert joined.count("```") % 2 == 0
    assert _squash(joined.replace("```", "")) == _squash(text.replace("```", ""))


def test_format_reply_converts_neutralizes_and_splits() -> None:
    markdown = "# お知らせ\n\n<!channel> **重要**: @here 確認してください。\n\n" + "- 項目\n" * 200
    chunks = format_reply(markdown, limit=300)
    assert len(chunks) > 1
    assert chunks[0].startswith(f"*お知らせ*\n\n@{Z}channel *重要*: @{Z}here 確認")
    assert all(len(c) <= 300 for c in chunks)
    assert not any("<!" in c or "@here" in c or "**" in c for c in chunks)
    assert sum(c.count("• 項目") for c in chunks) == 200


def test_format_reply_short_reply_is_single_chunk() -> None:
    assert format_reply("**OK** です") == ["*OK* です"]
