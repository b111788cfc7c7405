"""`aidd --report`: the morning report, one record (`record`) built from events.jsonl, the
feature files and git (`build`), shown as text, JSON or a self-contained HTML page."""
