#include "fits.h"

#include "cost.h"
#include "error.h"
#include "mha.h"

namespace attnsim {

void check_fits(int64_t need, int64_t mem_limit, const std::string& what, const std::string& hint) {
  MhaConfig limits;
  limits.mem_limit = mem_limit;
  const int64_t limit = effective_mem_limit(limits);
  if (need > limit)
    throw Error(what + " needs about " + human_bytes(need) + " (" + format_count(need) + " bytes), over the limit of " +
                human_bytes(limit) + (mem_limit > 0 ? " (--mem-limit)" : " (75% of memory; --mem-limit overrides)") +
                (hint.empty() ? "" : "; " + hint));
}

}  // namespace attnsim
