"""The widgets of the scalefront UI, one component per module.

The tabs' panes: `frontier.py` (filter, table, chart), `charts.py`, `detail.py`, `roi.py`, `scenario.py`. The
components they are built of: `frame_table.py` (a result table), `chart.py` (a chart widget), `fields.py` (text
fields), `status.py` (the status line), `too_small.py` (the notice for a terminal too small). Pure functions, no
widgets: `figures.py` (result frames to drawings), `plot.py` (character charts) and `markers.py` (one marker,
colour and name per fabric).
"""
