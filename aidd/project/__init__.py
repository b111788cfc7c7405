"""The project on disk: paths, detection, features, todo, markers, sync, scaffolding."""
