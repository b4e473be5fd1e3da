from collections import deque


def shortest_path(graph, start, goal):
    """Fewest-edges path from start to goal as a list of nodes (None if unreachable).

    graph maps a node to its neighbours."""
    previous = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in graph.get(node, ()):
            if nxt in previous:
                continue
            previous[nxt] = node
            if nxt == goal:
                path = [nxt]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return path[::-1]
            queue.append(nxt)
    return None
