// The placeholders of the examples in the `///` comments of Sources/Testing (after DocComments).

import StrataTesting
