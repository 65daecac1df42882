// The main menu of the Lakeside Institute of Data Science: built once the page has loaded, into <nav id="menu">.
document.addEventListener('DOMContentLoaded', function () {
  var sections = [
    ['/about/', 'About'],
    ['/study/', 'Study'],
    ['/research/', 'Research'],
    ['/events/', 'Events'],
    ['/news/', 'News']
  ];
  var nav = document.getElementById('menu');
  if (!nav) {
    return;
  }
  var list = document.createElement('ul');
  sections.forEach(function (section) {
    var item = document.createElement('li');
    var link = document.createElement('a');
    link.setAttribute('href', section[0]);
    link.textContent = section[1];
    item.appendChild(link);
    list.appendChild(item);
  });
  nav.appendChild(list);
});
