import { render } from 'preact';

/** The dashboard (API.md §10): placeholder until its pages land. */
function App() {
  return (
    <main>
      <h1>NairaPay dashboard</h1>
    </main>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
