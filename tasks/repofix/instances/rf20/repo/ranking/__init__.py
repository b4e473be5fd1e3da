from .board import leaderboard
