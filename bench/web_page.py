"""A large web page as sites serve them, for fetch_url in bench.busy_day: a handbook article
of some 3.6 MB. Its head carries a stylesheet and a script inline; a header with a menu of a
few hundred links and a sidebar come before the article (headings, paragraphs, lists, tables,
figures, code), then hundreds of comments, related articles, a footer, and at the end the
page's state as JSON in a script, as server-rendered apps (Next.js's __NEXT_DATA__) put it.

fetch_url reads the first 3 MB and hands trafilatura the first megabyte, which holds the
head, the menus and most of the article: the tree trafilatura builds is its cost. Made from a
fixed seed: the same bytes every run.
"""

from __future__ import annotations

import html
import json
import random

# The article's first sentence: bench.busy_day looks for it in what fetch_url returned.
OPENING = "Expense reports for the spring offsite are due on the third Friday of the month."
TITLE = "Team handbook: planning the spring offsite"
TARGET_BYTES = 3_600_000

WORDS = (
    "agenda budget calendar deadline schedule venue travel hotel train flight booking receipt "
    "invoice approval manager team review roadmap quarter planning workshop session speaker "
    "dinner lunch breakfast room projector badge registration survey feedback priority goal "
    "milestone release customer support incident retrospective design product engineering "
    "marketing sales finance policy guideline reimbursement allowance per diem taxi shuttle "
    "airport luggage accessibility dietary vegetarian allergy timezone remote hybrid office "
    "the a of to in for on with by from at as is are was be will can should must may and or "
    "but not every each all some most few this that these those our your their its"
).split()


def _sentence(r: random.Random) -> str:
    words = [r.choice(WORDS) for _ in range(r.randint(8, 24))]
    return " ".join(words).capitalize() + r.choice((".", ".", ".", "?", "!"))


def _paragraph(r: random.Random) -> str:
    return " ".join(_sentence(r) for _ in range(r.randint(3, 7)))


def _link(r: random.Random, n: int) -> str:
    label = " ".join(r.choice(WORDS) for _ in range(r.randint(1, 4))).title()
    return f'<li class="menu-item menu-item-{n}"><a href="/handbook/{n}">{label}</a></li>'


def _head(r: random.Random) -> str:
    rules = "".join(
        f".c{n}{{margin:{r.randint(0, 40)}px;padding:{r.randint(0, 24)}px;"
        f"color:#{r.randrange(0xFFFFFF):06x};font-size:{r.randint(10, 28)}px}}\n"
        for n in range(1500)
    )
    script = "".join(
        f"function f{n}(a,b){{return a*{r.randint(1, 99)}+b-{r.randint(1, 99)};}}\n"
        for n in range(2000)
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f"<title>{TITLE}</title>\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="description" content="How we plan, book and pay for the offsite.">\n'
        f'<meta property="og:title" content="{TITLE}">\n'
        '<link rel="stylesheet" href="/static/site.css">\n'
        f"<style>\n{rules}</style>\n<script>\n{script}</script>\n</head>\n"
    )


def _menus(r: random.Random) -> str:
    menu = "".join(_link(r, n) for n in range(400))
    side = "".join(_link(r, 1000 + n) for n in range(150))
    return (
        '<body class="page page-handbook"><header class="site-header"><nav class="mega-menu">'
        f'<ul class="menu">{menu}</ul></nav></header>\n'
        f'<div class="layout"><aside class="sidebar"><ul class="toc">{side}</ul></aside>\n'
    )


def _article(r: random.Random) -> str:
    parts = [f'<main><article class="post"><h1>{TITLE}</h1>\n<p>{OPENING} {_paragraph(r)}</p>']
    for section in range(40):
        parts.append(f'<h2 id="s{section}">{_sentence(r)[:-1]}</h2>')
        for n in range(r.randint(6, 12)):
            parts.append(f'<p class="c{r.randrange(1500)}">{_paragraph(r)}</p>')
            if n == 3:
                items = "".join(f"<li>{_sentence(r)}</li>" for _ in range(r.randint(3, 8)))
                parts.append(f"<ul>{items}</ul>")
        cells = "".join(
            "<tr>" + "".join(f"<td>{r.choice(WORDS)} {r.randint(1, 999)}</td>" for _ in range(5))
            for _ in range(12)
        )
        parts.append(f'<table class="data"><tbody>{cells}</tbody></table>')
        parts.append(
            f'<figure><img src="/img/{section}.jpg" alt="{_sentence(r)}" width="800" '
            f'height="450"><figcaption>{_sentence(r)}</figcaption></figure>'
        )
        code = html.escape(f"budget = {{'travel': {r.randint(100, 900)}, 'hotel': 2}}")
        parts.append(f"<pre><code>{code}</code></pre>")
    parts.append("</article>")
    return "\n".join(parts)


def _comments(r: random.Random) -> str:
    parts = ['<section class="comments"><h2>Comments</h2>']
    for n in range(900):
        parts.append(
            f'<div class="comment" id="comment-{n}"><div class="comment-meta">'
            f'<span class="author">person{r.randrange(400)}</span> <time>2026-0'
            f"{r.randint(1, 9)}-1{r.randint(0, 9)}</time></div>"
            f'<div class="comment-body"><p>{_paragraph(r)}</p></div>'
            '<div class="comment-actions"><button>Reply</button><button>Like</button></div></div>'
        )
    cards = "".join(
        f'<div class="card"><a href="/handbook/related/{n}"><h3>{_sentence(r)}</h3></a>'
        f"<p>{_sentence(r)}</p></div>"
        for n in range(120)
    )
    parts.append(f'</section><section class="related">{cards}</section></main></div>')
    return "\n".join(parts)


def _tail(r: random.Random, room: int) -> str:
    """The footer and the page's state as JSON, as large as the rest of the page leaves."""
    posts: list[str] = []
    size = 0
    while size < room:
        post = {
            "id": len(posts),
            "slug": f"handbook-{len(posts)}",
            "title": _sentence(r),
            "excerpt": _paragraph(r),
            "tags": [r.choice(WORDS) for _ in range(4)],
        }
        posts.append(json.dumps(post))
        size += len(posts[-1]) + 1
    state = '{"props":{"pageProps":{"posts":[' + ",".join(posts) + "]}}}"
    return (
        '\n<footer class="site-footer"><p>Copyright the handbook team. Privacy. Cookies.</p>'
        f'</footer>\n<script id="__NEXT_DATA__" type="application/json">{state}</script>\n'
        "</body></html>\n"
    )


def handbook_page() -> bytes:
    r = random.Random(20261127)
    page = _head(r) + _menus(r) + _article(r) + _comments(r)
    return (page + _tail(r, TARGET_BYTES - len(page))).encode()
