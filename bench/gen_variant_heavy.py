#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes issue 9's variant-heavy catalog: one backend with F features and V variants inheriting them.
# Usage: bench/gen_variant_heavy.py F V > catalog.json
import sys

nf, nv = int(sys.argv[1]), int(sys.argv[2])
features = ",".join('"feature_%d"' % i for i in range(nf))
variants = ",".join('{"name": "V%d"}' % i for i in range(nv))
print('{"format": "attnsel-catalog", "version": 1, "name": "amp", "backends": [{"name": "AMP", '
      '"domains": ["decoder"], "features": [%s], "variants": [%s]}], "policies": []}' % (features, variants))
