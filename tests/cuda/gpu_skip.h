// require_gpu(): the first line of every test that needs a CUDA device (see cuda_test_main.cpp).
#pragma once

namespace attnsim::testing {

inline constexpr int kSkipCode = 77;  // the tests' SKIP_RETURN_CODE
void require_gpu();                    // exits with kSkipCode when no device is present

}  // namespace attnsim::testing
