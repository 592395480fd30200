# KAlgebra's state as its accessibility tree gives it, printed as JSON for
# the checks of the kalgebra-* tasks (run by a command probe on the desktop,
# with Debian's python3-pyatspi):
#   variables  the Variables table, name -> value as shown
#   functions  the 2D graph's function list: name, expression, shown (its
#              box ticked) and values, the expression sampled at SAMPLES
#   sampled    each lambda of the Variables table sampled at SAMPLES
# A sample is "v1,v2,..." (each %.6g), or null when the expression cannot be
# evaluated there. Names in an expression resolve to the numbers and lambdas
# of the Variables table; anything but arithmetic, those names and a few
# of KAlgebra's functions (sin, ln, sqrt, root, abs, ...) makes it null, so
# no text the agent typed is run beyond that arithmetic.
import json
import math
import re

import pyatspi

SAMPLES = (-2, -0.5, 0, 1, 2.5)


def rows(node, depth=0):
    """The cells of the first tree (Qt item view) under node, by row."""
    for c in node:
        if c.getRoleName() == 'tree':
            t = c.queryTable()
            return [[t.getAccessibleAt(r, k) for k in range(t.nColumns)] for r in range(t.nRows)]
        if depth < 3 and c.getRoleName() in ('filler', 'layered pane'):
            found = rows(c, depth + 1)
            if found:
                return found
    return []


out = {'variables': {}, 'functions': [], 'sampled': {}}
for app in pyatspi.Registry.getDesktop(0):
    if app is None or app.name != 'kalgebra':
        continue
    for win in app:
        for f in win:
            if f.getRoleName() != 'frame':
                continue
            if f.name == 'Variables':
                out['variables'] = {r[0].name: r[1].name for r in rows(f)}
            elif f.name == 'Functions':
                out['functions'] = [{'name': r[0].name, 'expr': r[1].name,
                                     'shown': r[0].getState().contains(pyatspi.STATE_CHECKED)} for r in rows(f)]

env = {k: getattr(math, k) for k in ('sin', 'cos', 'tan', 'sinh', 'cosh', 'tanh', 'sqrt', 'exp', 'floor', 'pi', 'e')}
env.update(ln=math.log, log=math.log10, abs=abs, arcsin=math.asin, arccos=math.acos, arctan=math.atan,
           ceiling=math.ceil, root=lambda x, n: x ** (1 / n), power=lambda x, y: x ** y)


def compile_expr(text):
    param, body = text.split('->', 1) if '->' in text else ('x', text)
    param = param.strip().strip('()').strip()
    names = set(re.findall(r'[A-Za-z_]\w*', body))
    if not re.fullmatch(r'[\w.+\-*/^(), ]*', body) or any(
            n != param and n not in env and n not in out['variables'] for n in names):
        raise ValueError(text)
    code = compile(body.replace('^', '**'), '<kalgebra>', 'eval')
    return lambda v: eval(code, {'__builtins__': {}}, dict(env, **{param: v}))


def sample(fn):
    try:
        return ','.join('%.6g' % fn(x) for x in SAMPLES)
    except Exception:
        return None


lambdas = {}
for name, val in out['variables'].items():
    try:
        env.setdefault(name, float(val))
    except ValueError:
        if '->' in val:
            try:
                lambdas[name] = env.setdefault(name, compile_expr(val))
            except Exception:
                out['sampled'][name] = None
out['sampled'].update({name: sample(fn) for name, fn in lambdas.items()})
for f in out['functions']:
    try:
        f['values'] = sample(compile_expr(f['expr']))
    except Exception:
        f['values'] = None
print(json.dumps(out, sort_keys=True))
