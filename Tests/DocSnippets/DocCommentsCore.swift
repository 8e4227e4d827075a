// The placeholders of the examples in the `///` comments of Sources/Core (after DocComments).

import Strata

/// The error an example inspects.
var error: ResolutionError { fatalError("placeholder") }
