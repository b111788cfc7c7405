"""Notifications and the heartbeat: what a run tells the outside world, never holding it up."""
