package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/gittest"
)

// quickRoot adds units a1, a2 (one upstream) and b, c, d (one each) to
// env's root. Their upstreams are never reached: every unit is answered
// quick.
func quickRoot(t *testing.T, env Env) []string {
	t.Helper()
	files := map[string]string{}
	for name, url := range map[string]string{"a1": "a", "a2": "a", "b": "b", "c": "c", "d": "d"} {
		files["images/"+name+"/patchkit.yaml"] = "upstream:\n  url: https://upstream.invalid/" + url + "\n  ref: v1\npatches: patches/img\n"
	}
	gittest.WriteFiles(t, env.Root, files)
	return []string{"a1", "a2", "b", "c", "d", "missing"}
}

// TestPrefetchHandsBackOnce: what Prefetch recorded for a unit (its quick
// answer, or the error it met) is handed back once; asked again, Quick asks
// quick anew (a repaired cache is checked for real). An error ends its
// URL's worker: the next unit on that URL is asked only when the run gets
// to it. A unit whose spec does not load is left to the run.
func TestPrefetchHandsBackOnce(t *testing.T) {
	env := unitRoot(t, true)
	names := quickRoot(t, env)
	var mu sync.Mutex
	asked := map[string]int{}
	quick := func(_ context.Context, name string) (string, bool, error) {
		mu.Lock()
		asked[name]++
		n := asked[name]
		mu.Unlock()
		if name == "a1" && n == 1 {
			return "", false, errors.New("damaged cache")
		}
		return fmt.Sprintf("%s #%d", name, n), true, nil
	}
	p := Prefetch(context.Background(), env, names, 2, quick)
	p.Wait()
	want := map[string]int{"a1": 1, "b": 1, "c": 1, "d": 1}
	for name, n := range asked {
		if want[name] != n {
			t.Errorf("Prefetch asked quick about %s %d times, want %d (asked %v)", name, n, want[name], asked)
		}
	}
	if len(asked) != len(want) {
		t.Errorf("Prefetch asked about %v, want %v", asked, want)
	}
	if _, _, err := p.Quick(context.Background(), "a1"); err == nil || err.Error() != "damaged cache" {
		t.Errorf("Quick(a1) = %v, want the error Prefetch met", err)
	}
	if out, ok, err := p.Quick(context.Background(), "a1"); err != nil || !ok || out != "a1 #2" {
		t.Errorf("Quick(a1) again = %q, %v, %v; want quick asked anew", out, ok, err)
	}
	// a2 was not prefetched (its URL's worker stopped at a1's error); b
	// was, once.
	for _, c := range []struct{ name, want string }{{"a2", "a2 #1"}, {"b", "b #1"}, {"b", "b #2"}} {
		if out, ok, err := p.Quick(context.Background(), c.name); err != nil || !ok || out != c.want {
			t.Errorf("Quick(%s) = %q, %v, %v; want %q", c.name, out, ok, err, c.want)
		}
	}
}

// TestPrefetchBound: Prefetch works on at most bound upstream URLs at once,
// and on that many when it has them. Each quick answer waits (up to a
// minute) until bound are in flight, so the count reaches the bound
// whenever Prefetch overlaps that many, however slow the machine.
func TestPrefetchBound(t *testing.T) {
	for _, bound := range []int{1, 3} {
		env := unitRoot(t, true)
		names := quickRoot(t, env)
		var mu sync.Mutex
		inFlight, peak := 0, 0
		reached := make(chan struct{})
		var once sync.Once
		quick := func(_ context.Context, name string) (string, bool, error) {
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight)
			if inFlight >= bound {
				once.Do(func() { close(reached) })
			}
			mu.Unlock()
			select {
			case <-reached:
			case <-time.After(time.Minute):
			}
			mu.Lock()
			inFlight--
			mu.Unlock()
			return name, true, nil
		}
		Prefetch(context.Background(), env, names, bound, quick).Wait()
		if peak != bound {
			t.Errorf("bound %d: %d upstreams in flight at once", bound, peak)
		}
	}
}

// TestPrefetchNothingOffline: offline, or with one unit, Prefetch does
// nothing and Quick asks quick itself.
func TestPrefetchNothingOffline(t *testing.T) {
	env := unitRoot(t, true)
	names := quickRoot(t, env)
	asked := 0
	quick := func(_ context.Context, name string) (string, bool, error) { asked++; return name, true, nil }
	off := env
	off.Offline = true
	Prefetch(context.Background(), off, names, 4, quick)
	Prefetch(context.Background(), env, names[:1], 4, quick)
	if asked != 0 {
		t.Errorf("quick asked %d times offline or for one unit, want 0", asked)
	}
	if out, ok, _ := Prefetch(context.Background(), off, names, 4, quick).Quick(context.Background(), "b"); !ok || out != "b" || asked != 1 {
		t.Errorf("Quick(b) = %q, %v after %d asks; want quick's answer", out, ok, asked)
	}
}

// TestPrefetchNotQuickAskedOnce: a unit quick says needs the full work is
// prepared and its cache fetched by Prefetch; the run's Quick then hands
// back "not quick" without asking quick again (the fetched cache would
// only say so anew), and Fetch finds the URL done.
func TestPrefetchNotQuickAskedOnce(t *testing.T) {
	env := unitRoot(t, true)
	gittest.WriteFiles(t, env.Root, map[string]string{
		"images/other/patchkit.yaml": "upstream:\n  url: https://upstream.invalid/other\n  ref: v1\npatches: patches/img\n",
	})
	asked := map[string]int{}
	var mu sync.Mutex
	quick := func(_ context.Context, name string) (string, bool, error) {
		mu.Lock()
		defer mu.Unlock()
		asked[name]++
		return name, name != "img", nil
	}
	p := Prefetch(context.Background(), env, []string{"img", "other"}, 2, quick)
	p.Wait()
	defer p.Close()
	if _, ok, err := p.Quick(context.Background(), "img"); ok || err != nil {
		t.Fatalf("Quick(img) = %v, %v; want not quick", ok, err)
	}
	if asked["img"] != 1 {
		t.Errorf("quick was asked about img %d times, want once (by Prefetch)", asked["img"])
	}
	im, err := Prepare(context.Background(), env, "img", "")
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	if !p.fetched[im.URL] {
		t.Errorf("Prefetch did not fetch img's upstream")
	}
	// Handed back once: asked again, quick answers.
	if _, ok, _ := p.Quick(context.Background(), "img"); ok || asked["img"] != 2 {
		t.Errorf("Quick(img) again: ok %v, asked %d times; want quick asked anew", ok, asked["img"])
	}
}

// TestUnitsRunWhilePrefetchGoesOn: a unit's run starts as soon as
// Prefetch is done with its upstream, while Prefetch works on the next
// ones. One upstream at a time, the quick answer of b waits (up to a
// minute) until the run has done a1 and a2, whose upstream comes first:
// it can only if the run did not wait for the whole of Prefetch.
func TestUnitsRunWhilePrefetchGoesOn(t *testing.T) {
	env := unitRoot(t, true)
	names := quickRoot(t, env)
	aDone := make(chan struct{})
	waited := false
	quick := func(_ context.Context, name string) (string, bool, error) {
		if name == "b" {
			select {
			case <-aDone:
			case <-time.After(time.Minute):
				waited = true
			}
		}
		return name, true, nil
	}
	p := Prefetch(context.Background(), env, names[:5], 1, quick)
	defer p.Close()
	units, err := Each(context.Background(), Runner{Env: env}, names[:5], func(ctx context.Context, name string) (string, error) {
		out, _, err := p.Quick(ctx, name)
		if name == "a2" {
			close(aDone)
		}
		return out, err
	})
	p.Wait()
	if err != nil || len(units) != 5 || waited {
		t.Errorf("Each() = %+v, %v (b's answer waited for the whole minute: %v); want a1 and a2 run before Prefetch got to b", units, err, waited)
	}
	for i, u := range units {
		if u.Result != names[i] {
			t.Errorf("unit %d = %+v, want %s", i, u, names[i])
		}
	}
}
