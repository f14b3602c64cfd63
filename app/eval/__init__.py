"""Measuring judgment: a developer's and operator's tool, not part of the service.

`python -m app.eval --model MODEL` asks a model tomo's own judgment prompt about every labelled
decision point in eval/ and scores its answers against what people did (eval/README.md).

- `points`: the data files and their decision points; `labels`: what the builders share (a
  point's kind, how silent points are thinned); `build` (`python -m app.eval.build`),
  `build_irc` (with `irc_log`, the IRC corpus read), `build_ja`: the data set and its labels
  from local copies of the corpora; `datasheet`: the data README's counts and sample.
- `sample`: `--limit`'s sample, spread over languages and kinds; `slack_view`: a point as a
  Slack channel tomo's judgment sees; `run`: the model asked; `metrics`, `baselines`,
  `report`: the scores (intervals resampling whole conversations), what they are compared
  with, the table and JSON; `cli`: the command line.
"""
