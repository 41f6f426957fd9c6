"""A fast (or tiny) run says, on its page and at the end of its terminal summary, that it is
a preview (its budget, its seeds) and where the reference is; a full-budget run does not."""
from html import escape

from comparisons.cli import main
from comparisons.report.preview import REFERENCE_PAGE, preview_note
from comparisons.report.html import page_path

SMALL = ["--backends", "tfidf_logreg", "--limit-per-class", "40", "--threads", "1"]


def test_the_line_names_the_budget_the_seeds_and_the_reference():
    line = preview_note("fast", 1)
    assert "fast budget, one seed" in line and REFERENCE_PAGE in line and "`make reference`" in line
    assert "3 seeds" in preview_note("fast", 3) and "3 x 5 个划分上的结论" in preview_note("fast", 1, "zh")
    assert preview_note("full", 5) is None and preview_note(None, 1) is None


def test_a_tiny_run_ends_its_summary_and_heads_its_pages_with_the_line(tmp_path, capsys):
    out = tmp_path / "tiny"
    assert main(["run", *SMALL, "--profile", "tiny", "--quality-only", "--lang", "zh", "--out", str(out)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == preview_note("tiny", 1), err[-3:]
    for lang in ("en", "zh"):
        page = page_path(out, lang).read_text(encoding="utf-8")
        header = page[page.index("<header>"):page.index("</header>")]
        assert f'<p class="note preview">{escape(preview_note("tiny", 1, lang))}</p>' in header


def test_a_full_run_has_no_such_line(tmp_path, capsys):
    out = tmp_path / "full"
    assert main(["run", *SMALL, "--profile", "full", "--quality-only", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Preview" not in err and REFERENCE_PAGE not in err
    assert 'class="note preview"' not in page_path(out, "en").read_text(encoding="utf-8")
