"""The long tier's cases say what they found as they find it, on the process's stderr (run with -s): a case killed
by its timeout printed nothing before (the English 100x30 case at d10fea8)."""

from __future__ import annotations

from crawler import Crawler


def test_a_long_crawl_prints_each_failure_as_it_is_found(capfd):
    crawler = Crawler(["--preset", "transformer-2017-toy-numbers-de"], (80, 24), seed=7, progress_s=300)
    crawler._fail("text", "ModelText#gen-vs-out-live hides '6 decoder passes' with no mark", "5 m v", "│row│")
    err = capfd.readouterr().err
    assert "(seed 7) found:" in err
    assert "[text] ModelText#gen-vs-out-live hides '6 decoder passes' with no mark" in err
    assert "after: 5 m v at 80x24" in err and "|│row│" in err


def test_the_ci_crawl_prints_nothing_until_its_report(capfd):
    crawler = Crawler([], (80, 24), seed=11)
    crawler._fail("text", "a finding", "1 a", "screen")
    assert capfd.readouterr().err == ""
    assert len(crawler.report.failures) == 1
