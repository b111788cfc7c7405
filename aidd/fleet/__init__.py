"""The fleet (`aidd fleet ...`, the optional `fleet` extra): many projects on Temporal, one
workflow per project running plain `aidd` in an activity. Only `aidd.cli` imports this package,
and only for `aidd fleet`, so a plain install never imports temporalio (docs/fleet.md)."""
