# Sourced by the bench-*-vs-torch.sh scripts: python3-torch present (installed if root), a
# built attnsim-cli as $cli (ATTNSIM_CLI=build-x/attnsim-cli times another build; default
# build/attnsim-cli), and $kernels = the BLAS kernel set attnsim uses, which PyTorch's OpenBLAS
# is then given through OPENBLAS_CORETYPE so both run the same kernels.
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  [[ $(id -u) -eq 0 ]] || { echo "needs python3-torch: apt-get install -y python3-torch" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch >/dev/null
fi
cli=${ATTNSIM_CLI:-build/attnsim-cli}
[[ -x $cli ]] || tools/setup.sh
kernels=$("$cli" bench --repeats 1 --batch 1 --tq 8 --json | sed 's/.*"kernels": "\([^"]*\)".*/\1/')
