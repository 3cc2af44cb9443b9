"""tools/answer_figure.py: the README's headline figure renders the same bytes for the same numbers, and its --check
names the committed image stale when the numbers change."""
import answer_figure
from answer_table import Ratio

ROWS = [answer_figure.Row("PPO, small model, CPU\nAMD EPYC", {"Flax Linen": ("linen (jit)", Ratio(1.0, 1.0, 1.1)),
                                                              "PyTorch, NumPy env": ("torch_gymnasium (eager-vector)",
                                                                                     Ratio(3.2))})]


def test_two_renders_of_the_same_numbers_are_byte_identical(drawn_charts):
    assert answer_figure.png_bytes(answer_figure.draw(ROWS)) == answer_figure.png_bytes(answer_figure.draw(ROWS))


def test_check_passes_on_the_written_figure_and_fails_once_a_number_changes(tmp_path, monkeypatch, capsys,
                                                                          drawn_charts):
    monkeypatch.setattr(answer_figure, "ROOT", str(tmp_path))
    monkeypatch.setattr(answer_figure, "cnn_rows", lambda results: [])
    monkeypatch.setattr(answer_figure, "table_rows", lambda results: ROWS)
    assert answer_figure.main([]) == 0 and answer_figure.main(["--check"]) == 0
    moved = [ROWS[0]._replace(points={**ROWS[0].points, "Flax Linen": ("linen (jit)", Ratio(1.2))})]
    monkeypatch.setattr(answer_figure, "table_rows", lambda results: moved)
    assert answer_figure.main(["--check"]) == 1
    assert "docs/img/answer.png is not the figure" in capsys.readouterr().err


def test_the_committed_figure_is_what_the_committed_sittings_give(drawn_charts, capsys):
    assert answer_figure.main(["--check"]) == 0, capsys.readouterr().err
