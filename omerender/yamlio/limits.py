"""Hard limits on what omerender reads, so crafted input cannot exhaust time, memory or the C stack.

Each limit holds for a whole input (every file of one command, every item of one ResourceList), never per piece:
reading the pieces one by one must not multiply it. docs/reference/limits.md lists them for users.

Sizing target: a fleet of 2,000 runtimes and 10,000 InferenceServices. Built from the OME catalog, that fleet
is 12.7 MB of YAML, 12,000 documents and 1.35 million parse events, nested at most 10 levels deep; it loads in
about 5 s on one core. Each limit leaves room for roughly ten times that fleet, and stops crafted input long
before it hurts.
"""

MIB = 1024 * 1024

# One file, or the lock file. The loader needs about 0.4 s per MB and a few times the text in memory;
# a real object is at most 1.5 MiB (etcd's request limit), so 32 MiB holds thousands of them in one file.
MAX_FILE_BYTES = 32 * MIB

# Everything one command reads, all files together, and stdin (`render -` or a KRM ResourceList), which often
# holds a whole kustomization; stdin is refused as soon as this many bytes have arrived, never read in full first.: a 100 MB fleet split over files fits, with room to spare, under about two minutes of parsing.
MAX_TOTAL_BYTES = 256 * MIB

# Files read from the given directories: a fleet kept one object per file has 12,000.
MAX_FILES = 100_000

# Objects (YAML documents, and the items of `kind: List` documents), and YAML documents, in the whole input. Ten times the target fleet. Also bounds streams of empty documents (`---` repeated).
MAX_OBJECTS = 100_000

# Nesting of maps and lists. Kubernetes objects rarely pass 20 levels (a CRD's openAPIV3Schema reaches about 40).
# The C YAML composer recurses per level and crashes the process near 30,000 levels; the render's own recursive
# walks must stay well below Python's recursion limit of 1,000.
MAX_DEPTH = 100

# Nodes that aliases (`*name`, `<<: *name`) add to the whole input when expanded. A real repo reusing an env list
# of 20 entries in 10,000 InferenceServices needs 200,000; a "billion laughs" needs 10^9.
MAX_ALIAS_NODES = 1_000_000

# Characters that placeholders ({{.Annotations.a}}) print, across the whole render. One value may expand to
# at most 1 MiB (placeholders.MAX_OUTPUT_CHARS), but a 1 MB annotation printed by 1,500 args would be 1.5 GB.
# A real fleet prints a few hundred characters per InferenceService: 10,000 of them need about 5 MB.
MAX_EXPANDED_CHARS = 64 * MIB

# Placeholder actions ({{.Name}}, and {{""}} that prints nothing) run across the whole render. An action costs a few
# microseconds whatever it prints, so characters alone do not bound the work: one runtime argument of 10,000
# {{""}} (placeholders.MAX_ACTIONS, the most one value may hold) named by 600 InferenceServices is 6 million
# actions. A real fleet runs a handful per InferenceService: 10,000 of them with 20 each need 200,000.
MAX_PLACEHOLDER_ACTIONS = 200_000

# Runtimes judged against a model by automatic runtime selection (selection.md §3), across the input. Judgements are
# shared by the InferenceServices that ask for the same model, namespace and classes or modes, and only runtimes whose
# supportedModelFormats can match the model are judged; but distinct models times runtimes that all match still
# multiply (1,700 runtimes and 1,000 models fit in 1 MB). A judgement costs some microseconds. The target fleet
# makes about 9,000.
MAX_SELECTION_JUDGEMENTS = 250_000

# Values (maps, lists and scalars) of the runtime spec each InferenceService renders from, summed over the render and
# charged before each copy is made. Every InferenceService copies its runtime's spec into its pods, so one large
# runtime named by many InferenceServices would otherwise multiply within the input limits (one runtime of 20,000 env
# entries named by 3,000 InferenceServices, 1 MB in all, is 180 million values). A render may copy 8 times the values
# of its whole input, at least 1 million and at most 20 million: a copied value costs a few microseconds and about
# 100 bytes of output held until the end. The target fleet copies about 1.7 million, 4 times its input's 426,000
# values (each of its 2,000 runtimes is named by 5 InferenceServices); a 1 MB input holds at most about 300,000.
COPIED_VALUES_FREE = 1_000_000
COPIES_PER_INPUT_VALUE = 8
MAX_COPIED_VALUES = 20_000_000
