"""scratch_vs_pretrained: the sentence it draws from the per-size verdicts (the run itself: test_course_wing)."""
import pandas as pd

from comparisons.course.scratch_vs_pretrained import sentences, where_pretraining_stops_helping


def headline(verdicts: dict[str, list[str]]) -> pd.DataFrame:
    sizes = [50, 200, 1000]
    return pd.DataFrame([{"train_size": n, "pretrained": name, "verdict": v}
                         for name, row in verdicts.items() for n, v in zip(sizes, row)])


def test_the_size_where_pretraining_stops_being_detectably_better():
    better, same = "pretrained better", "no detectable difference"
    found = where_pretraining_stops_helping(headline({
        "hf_bert:full": [better, better, same],      # stops at 1000
        "hf_bert:frozen": [better, same, better],    # better again at 1000: it never stops within the sizes
    }))
    assert found == {"hf_bert:full": 1000, "hf_bert:frozen": None}
    never = where_pretraining_stops_helping(headline({"hf_bert:full": [same, same, "pretrained worse"]}))
    assert never == {"hf_bert:full": 50}
    lines = sentences({**found, **{"x": 50}}, [50, 200, 1000], "en")
    assert "at 1000 messages" in lines[0] and "up to 1000" in lines[1] and "any size" in lines[2]
    assert "1000 条" in sentences(found, [50, 200, 1000], "zh")[0]
