# Found by aftershock explore on 2026-11-28: profile cert-manager, seed 0, workload workloads/certificate.steps (with rotationPolicy Never, its default in v1.11, the finding was harmless; here the Certificate asks for a new key at every issuance).
# Plan: Given the secret watch of the implementation misses 8 seconds of events from its 1st DELETED event, then relists
# E2 violated: the second issuance made no new private key (1 key Secret made and deleted where 2 are): revision 2 was signed for revision 1's key, against rotationPolicy Always.
# Replay: aftershock run docs/findings/cert-manager-3.feature --profile profiles/thirdparty/cert-manager.yaml
@explore
Feature: cert-manager-3: a new certificate signed for the old private key under rotationPolicy Always, while a deleted key Secret is still in the cache

  Scenario: a Certificate renamed while its Secret watch misses the key Secret's deletion
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the secret watch of the implementation misses 8 seconds of events from its 1st DELETED event, then relists
    And I apply the manifest ../../workloads/cert-manager/certificate-rotated.yaml
    And within 60 seconds certificate/web has condition Ready True
    When I apply the manifest ../../workloads/cert-manager/certificate-rotated-renamed.yaml
    And 5 seconds pass
    And the namespace is quiet for 2 seconds
    Then the implementation's creates and deletes are as in the reference: certificaterequests create 2, secrets create 2, secrets delete 2 (E2)
