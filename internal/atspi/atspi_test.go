package atspi

import (
	"slices"
	"testing"
)

func TestStates(t *testing.T) {
	tests := []struct {
		bits []uint32
		want []string
	}{
		{nil, nil},
		{[]uint32{1 << 8}, []string{"enabled"}},
		{[]uint32{1<<25 | 1<<30 | 1<<24}, []string{"sensitive", "showing", "visible"}},
		{[]uint32{0, 1 << (41 - 32)}, []string{"checkable"}},
		{[]uint32{1 << 1, 1 << (43 - 32)}, []string{"active", "read-only"}},
	}
	for _, tc := range tests {
		if got := States(tc.bits); !slices.Equal(got, tc.want) {
			t.Errorf("States(%b) = %v, want %v", tc.bits, got, tc.want)
		}
	}
}
