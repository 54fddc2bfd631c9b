"""Framework-free detectors of secrets and personal data, one module per family.

Every detector takes *folded* text (`services.common.text_folding`) and yields hits in its
coordinates; `scan` runs them all and merges the spans. Standard library only, so policy's and the
worker's domains can ask "does a secret survive here?" without importing phonenumbers or
detect-secrets; the full `Redactor` (serving and worker) adds phone numbers on top.
"""
