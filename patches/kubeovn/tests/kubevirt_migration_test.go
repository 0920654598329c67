package controller

// TestVMIMigrationSchedulingRetry is the regression test patchkit injects into
// kube-ovn's tree as pkg/controller/kubevirt_migration_test.go (see
// images/kubeovn/patchkit.yaml and docs/kubeovn.md). It is not upstream code.
//
// Each subtest drives one VirtualMachineInstanceMigration in the Scheduling
// phase through the controller's real work queue (newTypedRateLimitingQueue,
// processNextWorkItem) into handleAddOrUpdateVMIMigration, and checks whether
// the key was requeued with rate limiting. Subtests are owned by the patches
// whose Test: headers name them:
//
//	target_pod_not_created                    0002 (our guard)
//	source_node_unknown, target_node_unknown,
//	both_unknown                              0001 (upstream kube-ovn #6834)
//	already_scheduled, same_node              nobody: green with or without the series
//
// It uses only helpers that exist in pkg/controller from v1.15.10 on
// (newFakeControllerWithOptions, newTypedRateLimitingQueue,
// processNextWorkItem, getWorkItemKey) and kubevirt's generated kubecli mocks.

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"kubevirt.io/client-go/kubecli"

	"github.com/kubeovn/kube-ovn/pkg/ovsdb/ovnnb"
)

func TestVMIMigrationSchedulingRetry(t *testing.T) {
	const (
		namespace     = "default"
		vmName        = "vm1"
		migrationName = "vm1-migration"
		migrationUID  = types.UID("5d0c1f8a-vmim-0001")
		lspName       = "vm1.default"
		nodeA         = "node-a"
		nodeB         = "node-b"
	)

	tests := []struct {
		name string
		// targetPod says whether the target virt-launcher pod is in the
		// informer cache; targetNode is its spec.nodeName.
		targetPod  bool
		targetNode string
		// sourceNode is where the VMI runs; "" means the VMI's migration
		// state and node name are not known yet.
		sourceNode string
		// wantRequeue: the handler returns an error, so the key goes back
		// to the queue rate-limited; otherwise it returns nil and is forgotten.
		wantRequeue bool
		// wantMigrateOptions: the OVN migrate options are set, from sourceNode
		// to targetNode.
		wantMigrateOptions bool
	}{
		{name: "target pod not created", targetPod: false, sourceNode: nodeA, wantRequeue: true},
		{name: "source node unknown", targetPod: true, targetNode: nodeB, sourceNode: "", wantRequeue: true},
		{name: "target node unknown", targetPod: true, targetNode: "", sourceNode: nodeA, wantRequeue: true},
		{name: "both unknown", targetPod: true, targetNode: "", sourceNode: "", wantRequeue: true},
		{name: "already scheduled", targetPod: true, targetNode: nodeB, sourceNode: nodeA, wantMigrateOptions: true},
		{name: "same node", targetPod: true, targetNode: nodeA, sourceNode: nodeA},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pods []*corev1.Pod
			if tt.targetPod {
				pods = append(pods, &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{
						Name:      "virt-launcher-" + vmName + "-target",
						Namespace: namespace,
						Labels:    map[string]string{kubevirtv1.MigrationJobLabel: string(migrationUID)},
					},
					Spec: corev1.PodSpec{NodeName: tt.targetNode},
				})
			}
			fc, err := newFakeControllerWithOptions(t, &FakeControllerOptions{Pods: pods})
			require.NoError(t, err)
			ctrl := fc.fakeController

			vmim := &kubevirtv1.VirtualMachineInstanceMigration{
				ObjectMeta: metav1.ObjectMeta{Name: migrationName, Namespace: namespace, UID: migrationUID},
				Spec:       kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: vmName},
				Status: kubevirtv1.VirtualMachineInstanceMigrationStatus{
					Phase:          kubevirtv1.MigrationScheduling,
					MigrationState: &kubevirtv1.VirtualMachineInstanceMigrationState{MigrationUID: migrationUID},
				},
			}
			vmi := &kubevirtv1.VirtualMachineInstance{
				ObjectMeta: metav1.ObjectMeta{Name: vmName, Namespace: namespace},
			}
			if tt.sourceNode != "" {
				vmi.Status.NodeName = tt.sourceNode
				vmi.Status.MigrationState = &kubevirtv1.VirtualMachineInstanceMigrationState{
					MigrationUID: migrationUID,
					SourceNode:   tt.sourceNode,
					TargetNode:   tt.targetNode,
				}
			}

			mockCtrl := gomock.NewController(t)
			vmimClient := kubecli.NewMockVirtualMachineInstanceMigrationInterface(mockCtrl)
			vmimClient.EXPECT().Get(gomock.Any(), migrationName, gomock.Any()).Return(vmim, nil).AnyTimes()
			vmiClient := kubecli.NewMockVirtualMachineInstanceInterface(mockCtrl)
			vmiClient.EXPECT().Get(gomock.Any(), vmName, gomock.Any()).Return(vmi, nil).AnyTimes()
			virtClient := kubecli.NewMockKubevirtClient(mockCtrl)
			virtClient.EXPECT().VirtualMachineInstanceMigration(namespace).Return(vmimClient).AnyTimes()
			virtClient.EXPECT().VirtualMachineInstance(namespace).Return(vmiClient).AnyTimes()
			ctrl.config.KubevirtClient = virtClient

			fc.mockOvnClient.EXPECT().ListNormalLogicalSwitchPorts(gomock.Any(), gomock.Any()).
				Return([]ovnnb.LogicalSwitchPort{{Name: lspName}}, nil).AnyTimes()
			if tt.wantMigrateOptions {
				fc.mockOvnClient.EXPECT().SetLogicalSwitchPortMigrateOptions(lspName, tt.sourceNode, tt.targetNode).Return(nil).Times(1)
			}
			// Any other SetLogicalSwitchPortMigrateOptions call fails the
			// subtest: gomock rejects calls it was not told to expect.

			// One pass of the controller's worker over its real queue type,
			// with the default controller rate limiter (5ms doubling to 1000s).
			key := namespace + "/" + migrationName
			queue := newTypedRateLimitingQueue[string]("AddOrUpdateVMIMigration", nil)
			t.Cleanup(queue.ShutDown)
			queue.Add(key)
			var handlerErr error
			handler := func(key string) error {
				handlerErr = ctrl.handleAddOrUpdateVMIMigration(key)
				return handlerErr
			}
			require.True(t, processNextWorkItem("add/update vmiMigration", queue, handler, getWorkItemKey))

			if tt.wantRequeue {
				require.Error(t, handlerErr, "the migration must be retried, not dropped: the handler returned nil")
				require.Equal(t, 1, queue.NumRequeues(key), "the key must be requeued rate-limited")
			} else {
				require.NoError(t, handlerErr)
				require.Equal(t, 0, queue.NumRequeues(key), "the key must not be requeued")
			}
		})
	}
}
