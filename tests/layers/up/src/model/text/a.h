// runs back up on purpose: text may not include the pass
#include "model/pass/b.h"
#include "views/c.h"
