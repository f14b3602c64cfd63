"""Measuring judgment: a developer's and operator's tool, not part of the service.

`python -m app.eval --model MODEL` asks a model tomo's own judgment prompt about every labelled
decision point in eval/ and scores its answers against what people did (eval/README.md).

- `points`: the data files and their decision points; `labels`: the labelling rules shared by
  the builders; `build` (`python -m app.eval.build`), `build_irc`, `build_ja`: the data set
  from local copies of the corpora.
- `slack_view`: a point as a Slack channel tomo's judgment sees; `run`: the model asked;
  `metrics`, `baselines`, `report`: the scores, what they are compared with, the table and
  JSON; `cli`: the command line.
"""
