// A screenshot is fitted to the window's height by its shape: the page
// gives it as data-aspect (the pages' policy refuses inline styles).
(function () {
  var shots = document.querySelectorAll('.shot[data-aspect]');
  for (var i = 0; i < shots.length; i++) shots[i].style.setProperty('--aspect', shots[i].getAttribute('data-aspect'));
})();

// Steps through a trajectory with the arrow keys and buttons, loading each
// screenshot when its step is first shown.
(function () {
  var traj = document.getElementById('trajectory');
  if (!traj) return;
  var steps = traj.querySelectorAll('article.step');
  if (!steps.length) return;
  var pos = document.getElementById('position');
  var cur = 0;
  function show(i) {
    if (i < 0 || i >= steps.length) return;
    steps[cur].hidden = true;
    cur = i;
    var s = steps[cur];
    s.hidden = false;
    var img = s.querySelector('img[data-src]');
    if (img) { img.src = img.getAttribute('data-src'); img.removeAttribute('data-src'); }
    pos.textContent = 'Step ' + (cur + 1) + ' of ' + steps.length;
    history.replaceState(null, '', '#' + s.id);
    if (typeof mark === 'function') mark();
  }
  var strip = document.querySelectorAll('#filmstrip a[data-index]');
  function mark() {
    for (var j = 0; j < strip.length; j++) strip[j].classList.toggle('current', j === cur);
  }
  var timer = null, play = document.getElementById('play');
  function stop() {
    if (timer) clearInterval(timer);
    timer = null;
    if (play) { play.textContent = 'Play'; play.setAttribute('aria-pressed', 'false'); }
  }
  function toggle() {
    if (timer) { stop(); return; }
    if (cur === steps.length - 1) show(0);
    play.textContent = 'Pause';
    play.setAttribute('aria-pressed', 'true');
    timer = setInterval(function () {
      if (cur >= steps.length - 1) { stop(); return; }
      show(cur + 1);
    }, 1000);
  }
  if (play) play.addEventListener('click', toggle);
  // The drawn actions can be hidden (they may cover a menu), and the
  // screenshots shown at full size (set-of-mark tags read there).
  var marks = document.getElementById('show-marks'), zoom = document.getElementById('zoom');
  function apply() {
    if (marks) traj.classList.toggle('no-marks', !marks.checked);
    if (zoom) traj.classList.toggle('zoomed', zoom.checked);
  }
  if (marks) marks.addEventListener('change', apply);
  if (zoom) zoom.addEventListener('change', apply);
  traj.addEventListener('click', function (e) {
    if (zoom && e.target.tagName === 'IMG' && e.target.closest('.shot') && !e.target.closest('.filmstrip')) {
      zoom.checked = !zoom.checked;
      apply();
    }
  });
  for (var k = 0; k < strip.length; k++) {
    strip[k].addEventListener('click', function (e) {
      e.preventDefault();
      stop();
      show(parseInt(this.getAttribute('data-index'), 10));
    });
  }
  document.getElementById('prev').addEventListener('click', function () { stop(); show(cur - 1); });
  document.getElementById('next').addEventListener('click', function () { stop(); show(cur + 1); });
  document.addEventListener('keydown', function (e) {
    var t = e.target && e.target.tagName;
    if (t === 'INPUT' || t === 'TEXTAREA' || t === 'BUTTON') return;
    if (e.key === 'ArrowRight') { stop(); show(cur + 1); e.preventDefault(); }
    if (e.key === 'ArrowLeft') { stop(); show(cur - 1); e.preventDefault(); }
    if (e.key === ' ' && play) { toggle(); e.preventDefault(); }
    if (e.key === 'm' && marks) { marks.checked = !marks.checked; apply(); }
    if (e.key === 'z' && zoom) { zoom.checked = !zoom.checked; apply(); }
  });
  mark();
  var m = /^#step-(\d+)$/.exec(location.hash);
  if (m) {
    for (var i = 0; i < steps.length; i++) if (steps[i].id === 'step-' + m[1]) show(i);
  }
})();
// Remembers the reviewer's name and token in this browser (localStorage,
// never on the server) and fills them into the next review form; a token
// the server refused is forgotten.
(function () {
  var form = document.getElementById('review-form');
  if (!form) return;
  var store;
  try { store = window.localStorage; } catch (e) { return; }
  if (!store) return;
  if (form.hasAttribute('data-token-refused')) store.removeItem('proctor.token');
  ['reviewer', 'token'].forEach(function (name) {
    var el = form.elements[name];
    var v = store.getItem('proctor.' + name);
    if (el && !el.value && v) el.value = v;
  });
  form.addEventListener('submit', function () {
    try {
      store.setItem('proctor.reviewer', form.elements.reviewer.value.trim());
      store.setItem('proctor.token', form.elements.token.value);
    } catch (e) { /* storage full or disabled: nothing to remember */ }
  });
})();
// Steps the trajectories of the side-by-side page together: each column
// shows its step i, or says where it ended.
(function () {
  var side = document.getElementById('side');
  if (!side) return;
  var n = parseInt(side.getAttribute('data-steps'), 10) || 0;
  if (!n) return;
  var cols = side.querySelectorAll('.side-col');
  var pos = document.getElementById('position');
  var cur = 0, timer = null, play = document.getElementById('play');
  function show(i) {
    if (i < 0 || i >= n) return;
    cur = i;
    cols.forEach(function (c) {
      var steps = c.querySelectorAll('article.side-step');
      steps.forEach(function (s, j) {
        s.hidden = j !== Math.min(i, steps.length - 1);
        var img = s.hidden ? null : s.querySelector('img[data-src]');
        if (img) { img.src = img.getAttribute('data-src'); img.removeAttribute('data-src'); }
      });
      c.querySelector('.side-ended').hidden = i < steps.length;
    });
    pos.textContent = 'Step ' + (cur + 1) + ' of ' + n;
  }
  function stop() {
    if (timer) clearInterval(timer);
    timer = null;
    play.textContent = 'Play';
    play.setAttribute('aria-pressed', 'false');
  }
  function toggle() {
    if (timer) { stop(); return; }
    if (cur === n - 1) show(0);
    play.textContent = 'Pause';
    play.setAttribute('aria-pressed', 'true');
    timer = setInterval(function () { if (cur >= n - 1) { stop(); return; } show(cur + 1); }, 1000);
  }
  play.addEventListener('click', toggle);
  document.getElementById('prev').addEventListener('click', function () { stop(); show(cur - 1); });
  document.getElementById('next').addEventListener('click', function () { stop(); show(cur + 1); });
  document.addEventListener('keydown', function (e) {
    var t = e.target && e.target.tagName;
    if (t === 'INPUT' || t === 'TEXTAREA' || t === 'BUTTON') return;
    if (e.key === 'ArrowRight') { stop(); show(cur + 1); e.preventDefault(); }
    if (e.key === 'ArrowLeft') { stop(); show(cur - 1); e.preventDefault(); }
    if (e.key === ' ') { toggle(); e.preventDefault(); }
  });
  show(0);
})();
