# Found by aftershock explore on 2026-11-28: profile cert-manager, seed 0, workload workloads/certificate.steps.
# Plan: Given the secret watch of the implementation misses 3 seconds of events from its 2nd ADDED event, then relists
# E2 violated: the implementation made 9 certificaterequests create (reference: 2), one new revision each: the certificate it had just issued was issued again and again.
# Replay: aftershock run docs/findings/cert-manager-2.feature --profile profiles/thirdparty/cert-manager.yaml
# The fix tried on v1.11.0: aftershock run docs/findings/cert-manager-2.feature --profile profiles/thirdparty/cert-manager-2-fixed.yaml
@explore
Feature: cert-manager-2: a Certificate issued again at every pass while its Secret is missing from the cache

  Scenario: a Certificate issued while its Secret watch misses 3 seconds
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the secret watch of the implementation misses 3 seconds of events from its 2nd ADDED event, then relists
    When I apply the manifest ../../workloads/cert-manager/certificate.yaml
    And the namespace is quiet for 2 seconds
    Then the implementation's creates and deletes are as in the reference: certificaterequests create 1, secrets create 1, secrets delete 1 (E2)
    And within 30 seconds certificate/web has condition Ready True
