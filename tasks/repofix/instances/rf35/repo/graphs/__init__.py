from .paths import shortest_path
