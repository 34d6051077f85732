"""The README's scenario table is generated from the scenario declarations (STYLE.md: docs from
declarations), so it cannot drift: a new or changed scenario fails this test until the table is
pasted again from `kafka-emu conformance --list --markdown`."""

from pathlib import Path

from kafka_emu.conformance.docs import markdown

README = Path(__file__).resolve().parents[2] / "README.md"
START = "<!-- scenarios: the output of `kafka-emu conformance --list --markdown`; a test keeps it so -->\n"
END = "\n<!-- end of scenarios -->"


def test_the_readme_scenario_table_is_the_generated_one():
    text = README.read_text()
    assert START in text and END in text
    table = text.split(START, 1)[1].split(END, 1)[0]
    assert table == markdown(), (
        "README's scenario table differs from the declarations: paste the output of "
        "`kafka-emu conformance --list --markdown` between the markers")


TXN_START = ("<!-- transactions scenarios: the output of `kafka-emu conformance --transactions "
             "--list --markdown`; a test keeps it so -->\n")
TXN_END = "\n<!-- end of transactions scenarios -->"


def test_the_readme_transactions_table_is_the_generated_one():
    from kafka_emu.conformance.txn_scenarios import markdown as txn_markdown

    text = README.read_text()
    assert TXN_START in text and TXN_END in text
    assert text.split(TXN_START, 1)[1].split(TXN_END, 1)[0] == txn_markdown()
