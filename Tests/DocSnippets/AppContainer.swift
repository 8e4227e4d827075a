// The application's container, for examples that use one made elsewhere.

import Strata

let container = Container()
