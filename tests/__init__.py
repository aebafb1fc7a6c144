import sys

# The test modules (which pytest rewrites for its assertions) and the package are compiled once and
# kept in __pycache__ even where the environment says not to write bytecode
# (PYTHONDONTWRITEBYTECODE): otherwise every worker of every run compiles them all again, about 6 s
# of CPU a worker, a tenth of the fast tier on two cores. (This package is imported before any
# conftest or test module.)
sys.dont_write_bytecode = False
