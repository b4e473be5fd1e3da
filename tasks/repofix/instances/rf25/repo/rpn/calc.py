import operator

OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


def evaluate(expression):
    """Evaluate a reverse-Polish expression like '3 4 + 2 *'."""
    stack = []
    for token in expression.split():
        if token in OPS:
            if len(stack) < 2:
                raise ValueError("not enough operands")
            right = stack.pop()
            left = stack.pop()
            stack.append(OPS[token](right, left))
        else:
            stack.append(float(token))
    if len(stack) != 1:
        raise ValueError("malformed expression")
    return stack[0]
