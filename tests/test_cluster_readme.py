"""The cluster guide's example (docs/how-to/cluster.md, moved there from the README's "A cluster
in one process") runs as printed, with the outcome it promises: every broker back after the
rolling bounce, the partition's ISR whole again. tests/docs/test_examples.py runs the block
too; this test checks what it prints."""

from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "how-to" / "cluster.md"


def test_the_cluster_example_in_the_guide_runs(capsys):
    text = PAGE.read_text()
    code = text[text.index("```python\n") + 10:]
    code = code[:code.index("```")]
    assert "stop_broker" in code and "start_broker" in code
    exec(compile(code, str(PAGE), "exec"), {})
    printed = capsys.readouterr().out
    assert printed.count("'running': True") == 3  # every broker back after the bounce
    assert "'isr': [1, 2, 3]" in printed
