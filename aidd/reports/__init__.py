"""What the user reads about a project: status, the feature check, whether an aidd runs."""
