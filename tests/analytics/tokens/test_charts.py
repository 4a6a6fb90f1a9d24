"""analytics/tokens/charts.py: whole-number ticks on the traffic chart, and the empty
states of both charts."""

from analytics.tokens.charts import (
    NO_PARALLEL,
    NO_TRAFFIC,
    build_tax_figure,
    build_traffic_figure,
)
from analytics.tokens.report import EncodingTraffic, Reported, Saving, TrafficLanguage


def _language(code: str, tokens: int) -> TrafficLanguage:
    counted = EncodingTraffic(tokens, 0, tokens, 1.0, 0.25, 0.25)
    return TrafficLanguage(
        language=code,
        requests=1,
        share_of_requests=1.0,
        chars=4 * tokens,
        bytes=4 * tokens,
        encodings={"o200k_base": counted},
        saving=Saving(tokens, tokens, 0, 0.0),
        reported=Reported(0, 0, 0, 0, None),
    )


def test_traffic_tokens_tick_on_whole_numbers_with_separators() -> None:
    fig = build_traffic_figure([_language("en", 3), _language("de", 12_000)], ["o200k_base"])
    assert [tuple(t.y) for t in fig.data] == [(3, 12_000)]
    assert (fig.layout.yaxis.tickformat, fig.layout.yaxis.dtick) == (",d", 5_000)


def test_no_traffic_and_no_parallel_texts_say_what_to_do() -> None:
    traffic = build_traffic_figure([], ["o200k_base"])
    assert [a.text.replace("<br>", " ") for a in traffic.layout.annotations] == [NO_TRAFFIC]
    tax = build_tax_figure({"o200k_base": []}, [])
    assert [a.text.replace("<br>", " ") for a in tax.layout.annotations] == [NO_PARALLEL]
    assert not tax.layout.shapes  # no English line across an empty chart
    assert (tax.layout.xaxis.visible, tax.layout.yaxis.visible) == (False, False)
